//! The media ranges of an `Accept` header (RFC 9110), each with its q-value:
//! what the pet store's JSON or XML and the subscriber pages' HTML or JSON
//! are chosen by.

/// Each media range of `accept` (`text/html`, `*/*`) with its q-value,
/// 1 where none is given, clamped to 0..=1; parameters other than `q` are
/// left out.
pub(crate) fn media_ranges(accept: &str) -> impl Iterator<Item = (&str, f32)> {
    accept.split(',').map(|range| {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0)
            .clamp(0.0, 1.0);
        (media, q)
    })
}

/// The q-value `accept` gives `media` when named as itself (no wildcard):
/// 0 when it is not named.
pub(crate) fn named_weight(accept: &str, media: &str) -> f32 {
    media_ranges(accept)
        .filter(|(range, _)| range.eq_ignore_ascii_case(media))
        .map(|(_, q)| q)
        .fold(0.0, f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_carry_their_q_values() {
        let ranges: Vec<_> =
            media_ranges("text/html, application/json;q=0.5;charset=x, */*;q=7").collect();
        assert_eq!(
            ranges,
            [("text/html", 1.0), ("application/json", 0.5), ("*/*", 1.0)]
        );
    }

    #[test]
    fn a_named_weight_ignores_wildcards() {
        let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        assert_eq!(named_weight(browser, "text/html"), 1.0);
        assert_eq!(named_weight(browser, "application/json"), 0.0);
        assert_eq!(named_weight("*/*", "text/html"), 0.0);
        assert_eq!(named_weight("TEXT/HTML;q=0.4", "text/html"), 0.4);
    }
}
