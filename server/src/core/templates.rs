//! The texts people read, kept as template files under `server/templates/`
//! (minijinja, compiled into the binary): the subscriber pages and each
//! email's subject, text and HTML. HTML templates escape every value they
//! are given, so what came from outside (a name, a message) shows as text.

use std::sync::LazyLock;

use minijinja::Environment;
use serde::Serialize;

/// Every template, by the name the others extend it by.
const TEMPLATES: &[(&str, &str)] = &[
    (
        "pages/base.html",
        include_str!("../../templates/pages/base.html"),
    ),
    (
        "pages/confirmed.html",
        include_str!("../../templates/pages/confirmed.html"),
    ),
    (
        "pages/unsubscribe.html",
        include_str!("../../templates/pages/unsubscribe.html"),
    ),
    (
        "pages/unsubscribed.html",
        include_str!("../../templates/pages/unsubscribed.html"),
    ),
    (
        "pages/resubscribed.html",
        include_str!("../../templates/pages/resubscribed.html"),
    ),
    (
        "pages/link_problem.html",
        include_str!("../../templates/pages/link_problem.html"),
    ),
    (
        "pages/console/base.html",
        include_str!("../../templates/pages/console/base.html"),
    ),
    (
        "pages/console/message.html",
        include_str!("../../templates/pages/console/message.html"),
    ),
    (
        "pages/console/sign_in.html",
        include_str!("../../templates/pages/console/sign_in.html"),
    ),
    (
        "pages/console/dashboard.html",
        include_str!("../../templates/pages/console/dashboard.html"),
    ),
    (
        "pages/console/key_requests.html",
        include_str!("../../templates/pages/console/key_requests.html"),
    ),
    (
        "pages/console/key_issued.html",
        include_str!("../../templates/pages/console/key_issued.html"),
    ),
    (
        "pages/console/posts.html",
        include_str!("../../templates/pages/console/posts.html"),
    ),
    (
        "pages/console/post_editor.html",
        include_str!("../../templates/pages/console/post_editor.html"),
    ),
    (
        "pages/console/post_publish.html",
        include_str!("../../templates/pages/console/post_publish.html"),
    ),
    (
        "pages/console/post_published.html",
        include_str!("../../templates/pages/console/post_published.html"),
    ),
    (
        "pages/console/contact.html",
        include_str!("../../templates/pages/console/contact.html"),
    ),
    (
        "pages/console/subscribers.html",
        include_str!("../../templates/pages/console/subscribers.html"),
    ),
    (
        "pages/console/credentials.html",
        include_str!("../../templates/pages/console/credentials.html"),
    ),
    (
        "pages/console/shown_once.html",
        include_str!("../../templates/pages/console/shown_once.html"),
    ),
    (
        "pages/console/failed_emails.html",
        include_str!("../../templates/pages/console/failed_emails.html"),
    ),
    (
        "email/base.html",
        include_str!("../../templates/email/base.html"),
    ),
    (
        "email/welcome.txt",
        include_str!("../../templates/email/welcome.txt"),
    ),
    (
        "email/welcome.html",
        include_str!("../../templates/email/welcome.html"),
    ),
    (
        "email/confirmation.txt",
        include_str!("../../templates/email/confirmation.txt"),
    ),
    (
        "email/confirmation.html",
        include_str!("../../templates/email/confirmation.html"),
    ),
    (
        "email/new_post.txt",
        include_str!("../../templates/email/new_post.txt"),
    ),
    (
        "email/new_post.html",
        include_str!("../../templates/email/new_post.html"),
    ),
    (
        "email/contact_notification.txt",
        include_str!("../../templates/email/contact_notification.txt"),
    ),
    (
        "email/contact_notification.html",
        include_str!("../../templates/email/contact_notification.html"),
    ),
    (
        "email/api_key_issued.txt",
        include_str!("../../templates/email/api_key_issued.txt"),
    ),
    (
        "email/api_key_issued.html",
        include_str!("../../templates/email/api_key_issued.html"),
    ),
    (
        "email/api_key_declined.txt",
        include_str!("../../templates/email/api_key_declined.txt"),
    ),
    (
        "email/api_key_declined.html",
        include_str!("../../templates/email/api_key_declined.html"),
    ),
    (
        "email/key_requests_waiting.txt",
        include_str!("../../templates/email/key_requests_waiting.txt"),
    ),
    (
        "email/key_requests_waiting.html",
        include_str!("../../templates/email/key_requests_waiting.html"),
    ),
    (
        "email/key_request_received.txt",
        include_str!("../../templates/email/key_request_received.txt"),
    ),
    (
        "email/key_request_received.html",
        include_str!("../../templates/email/key_request_received.html"),
    ),
];

/// The templates, parsed once. A template that does not parse is a fault
/// of the build, which the tests find: [`render`] then answers an error.
static ENVIRONMENT: LazyLock<Result<Environment<'static>, minijinja::Error>> =
    LazyLock::new(|| {
        let mut environment = Environment::new();
        // `.html` escapes (minijinja's default by name); text stays text.
        environment.set_keep_trailing_newline(true);
        environment.set_trim_blocks(true);
        for (name, source) in TEMPLATES {
            match email_parts(name, source) {
                // The subject's line is a template of its own, so that no
                // value put in the subject can reach the body.
                Some((subject, body)) => {
                    environment.add_template_owned(format!("{name}#subject"), subject)?;
                    environment.add_template(name, body)?;
                }
                None => environment.add_template(name, source)?,
            }
        }
        Ok(environment)
    });

/// An email's text template, `Subject: ...`, a blank line, then the body:
/// its subject and its body.
fn email_parts(name: &str, source: &'static str) -> Option<(&'static str, &'static str)> {
    if !name.ends_with(".txt") {
        return None;
    }
    let (first, body) = source.split_once("\n\n")?;
    Some((first.strip_prefix("Subject: ")?, body))
}

/// Whose site the page or email speaks for: its name (from the content),
/// and the address its name links to.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Site {
    pub(crate) name: String,
    pub(crate) url: String,
}

/// Why a template could not be rendered: a fault of the build.
#[derive(Debug)]
pub(crate) struct RenderError(String);

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RenderError {}

fn environment() -> Result<&'static Environment<'static>, RenderError> {
    ENVIRONMENT
        .as_ref()
        .map_err(|e| RenderError(format!("the templates do not parse: {e:#}")))
}

/// The template `name` with `context`.
pub(crate) fn render(name: &str, context: impl Serialize) -> Result<String, RenderError> {
    let template = environment()?
        .get_template(name)
        .map_err(|e| RenderError(format!("{name}: {e:#}")))?;
    template
        .render(context)
        .map_err(|e| RenderError(format!("{name}: {e:#}")))
}

/// An email made from `email/<name>.txt` (a `Subject:` line, a blank line,
/// the body) and `email/<name>.html`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EmailText {
    pub(crate) subject: String,
    pub(crate) text: String,
    pub(crate) html: String,
}

/// The email `name` with `context`.
pub(crate) fn render_email(name: &str, context: impl Serialize) -> Result<EmailText, RenderError> {
    let context = minijinja::Value::from_serialize(context);
    let subject = render(&format!("email/{name}.txt#subject"), &context)?;
    Ok(EmailText {
        // A subject is one line, whatever was put in it.
        subject: subject.split_whitespace().collect::<Vec<_>>().join(" "),
        text: render(&format!("email/{name}.txt"), &context)?,
        html: render(&format!("email/{name}.html"), &context)?,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn site() -> Site {
        Site {
            name: "Ada <Example>".to_owned(),
            url: "https://ada.example.test".to_owned(),
        }
    }

    #[test]
    fn every_template_parses() {
        let environment = environment().unwrap();
        for (name, source) in TEMPLATES {
            environment.get_template(name).unwrap();
            if name.ends_with(".txt") {
                assert!(
                    email_parts(name, source).is_some(),
                    "{name} starts with no `Subject:` line and a blank line"
                );
            }
        }
    }

    #[test]
    fn html_escapes_what_it_is_given_and_text_keeps_it() {
        let context = serde_json::json!({
            "site": site(),
            "name": "<script>alert(1)</script>",
            "email": "a@example.test",
            "subject": "Hi \"there\"",
            "message": "<b>bold</b>\nsecond line",
        });
        let email = render_email("contact_notification", &context).unwrap();
        assert_eq!(email.subject, "Contact form: Hi \"there\"");
        assert!(
            email
                .text
                .contains("<script>alert(1)</script> <a@example.test>"),
            "{}",
            email.text
        );
        assert!(
            email
                .html
                .contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"),
            "{}",
            email.html
        );
        assert!(!email.html.contains("<script>"));
        assert!(!email.html.contains("<b>bold"));
        assert!(email.html.contains("Ada &lt;Example&gt;"));
    }

    #[test]
    fn a_subject_is_one_line() {
        let context = serde_json::json!({
            "site": site(),
            "post": {"title": "Two\nlines", "summary": "s", "url": "https://x.test/p"},
            "unsubscribe_url": "https://x.test/u",
        });
        let email = render_email("new_post", &context).unwrap();
        assert_eq!(email.subject, "New post: Two lines");
        // minijinja escapes `/` too; an HTML reader reads the URL back.
        assert!(
            email
                .html
                .contains("href=\"https:&#x2f;&#x2f;x.test&#x2f;u\""),
            "{}",
            email.html
        );
    }
}
