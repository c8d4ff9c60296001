//! The one rule for email addresses, shared by every entry point that takes
//! one (newsletter, contact form, key requests, site information) and by the
//! mail builder, so that what is accepted can be sent: RFC 5321 syntax (as
//! lettre reads it), at most 254 characters, and a domain that is a host
//! name (`example.com`, or `localhost` for a local relay), never an address
//! literal (`user@[127.0.0.1]`), which no public mail goes to and which the
//! builder used to refuse for good after the request was accepted.

use lettre::Address;

/// The longest address (RFC 5321's path limit, less the angle brackets).
pub(crate) const MAX_CHARS: usize = 254;

/// `text` as an address this server sends to, or why it is not one.
pub(crate) fn parse(text: &str) -> Result<Address, &'static str> {
    if text.chars().count() > MAX_CHARS {
        return Err("at most 254 characters");
    }
    let address: Address = text.parse().map_err(|_| "not an email address")?;
    let domain = address.domain();
    let labels_ok = domain.split('.').all(|label| {
        !label.is_empty()
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(|c| c.is_alphanumeric() || c == '-')
    });
    if !labels_ok {
        return Err("the domain must be a host name such as example.com");
    }
    Ok(address)
}

/// The mailbox an address reaches, the same for `Victim+news@Example.com`
/// and `victim@example.com`: lower case, without a `+tag`. Guards that limit
/// email to one person (the newsletter's resend guard) count by it.
pub(crate) fn mailbox_key(address: &str) -> String {
    let lower = address.to_lowercase();
    match lower.rsplit_once('@') {
        Some((local, domain)) => {
            let local = local.split_once('+').map_or(local, |(base, _)| base);
            format!("{local}@{domain}")
        }
        None => lower,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_accepted_is_a_host_name_address() {
        for good in [
            "ada@example.test",
            "a.b+news@mail.example.com",
            "x@xn--bcher-kva.example",
        ] {
            assert!(parse(good).is_ok(), "{good}");
        }
        for bad in [
            "e@[127.0.0.1]",
            "e@[IPv6:::1]",
            "e@-bad.example",
            "e@bad..example",
            "no-at-sign",
            "",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse(&format!("{}@example.com", "a".repeat(250))).is_err());
    }

    #[test]
    fn tags_and_case_reach_the_same_mailbox() {
        assert_eq!(mailbox_key("Victim+1@Example.com"), "victim@example.com");
        assert_eq!(mailbox_key("victim+2@example.com"), "victim@example.com");
        assert_eq!(mailbox_key("victim@example.com"), "victim@example.com");
    }
}
