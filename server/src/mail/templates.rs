//! The texts of the emails the portfolio sends. Every newsletter email
//! carries the unsubscribe link in its body and in `List-Unsubscribe`.

use super::OutgoingEmail;

/// The link that unsubscribes (body and `List-Unsubscribe`).
pub fn unsubscribe_url(public_url: &str, unsubscribe_token: &str) -> String {
    format!("{public_url}/api/newsletter/unsubscribe?token={unsubscribe_token}")
}

/// To a new subscriber (single opt-in), or once the address is confirmed.
pub fn welcome(public_url: &str, to: &str, unsubscribe_token: &str) -> OutgoingEmail {
    let unsubscribe = unsubscribe_url(public_url, unsubscribe_token);
    OutgoingEmail {
        to: to.to_owned(),
        subject: "Welcome to the newsletter".to_owned(),
        body: format!(
            "Thank you for subscribing. You will hear about new posts.\n\n\
             To unsubscribe, open this link (one request, no questions):\n{unsubscribe}\n"
        ),
        list_unsubscribe: Some(unsubscribe),
    }
}

/// The link that confirms a subscription (double opt-in).
pub fn confirmation(public_url: &str, to: &str, confirm_token: &str) -> OutgoingEmail {
    OutgoingEmail {
        to: to.to_owned(),
        subject: "Please confirm your subscription".to_owned(),
        body: format!(
            "Someone (we hope you) asked to subscribe this address to the newsletter.\n\n\
             To confirm, open this link:\n{public_url}/api/newsletter/confirm?token={confirm_token}\n\n\
             If it was not you, ignore this email: nothing will be sent without confirmation.\n"
        ),
        list_unsubscribe: None,
    }
}

/// What a post's notification tells a subscriber.
#[derive(Debug, Clone, Copy)]
pub struct PostNotice<'a> {
    pub title: &'a str,
    pub summary: &'a str,
    pub url: &'a str,
}

/// A new post, to one subscriber.
pub fn new_post(
    public_url: &str,
    post: PostNotice<'_>,
    to: &str,
    unsubscribe_token: &str,
) -> OutgoingEmail {
    let unsubscribe = unsubscribe_url(public_url, unsubscribe_token);
    OutgoingEmail {
        to: to.to_owned(),
        subject: format!("New post: {}", post.title),
        body: format!(
            "{}\n\n{}\n\nRead it: {}\n\nTo unsubscribe, open this link:\n{unsubscribe}\n",
            post.title, post.summary, post.url
        ),
        list_unsubscribe: Some(unsubscribe),
    }
}

/// What someone wrote through the contact form.
#[derive(Debug, Clone, Copy)]
pub struct ContactNotice<'a> {
    pub name: &'a str,
    pub email: &'a str,
    pub subject: Option<&'a str>,
    pub message: Option<&'a str>,
}

/// A contact-form submission, to the site owner.
pub fn contact_notification(owner: &str, contact: ContactNotice<'_>) -> OutgoingEmail {
    OutgoingEmail {
        to: owner.to_owned(),
        subject: format!(
            "Contact form: {}",
            contact.subject.unwrap_or("(no subject)")
        ),
        body: format!(
            "{} <{}> wrote through the contact form:\n\n{}\n",
            contact.name,
            contact.email,
            contact.message.unwrap_or("(no message)")
        ),
        list_unsubscribe: None,
    }
}
