//! What the subscriber pages show: whose site they speak for, and whose an
//! unsubscribe link is.

use crate::core::failure::Failure;
use crate::core::templates::Site;
use crate::portfolio::db;
use crate::portfolio::model::Subscriber;
use crate::storage::Database;

/// The site as the content names it now.
pub(crate) async fn site(db: &Database, public_url: &str) -> Result<Site, Failure> {
    let site = db::content::site_info(&mut *db.conn().await?).await?;
    Ok(site.into_site(public_url))
}

/// The subscriber an unsubscribe link was sent to, if any; a token that
/// cannot be one is refused.
pub(crate) async fn link_holder(
    db: &Database,
    unsubscribe_token: &str,
) -> Result<Option<Subscriber>, Failure> {
    let unsubscribe_token = Subscriber::link_token(unsubscribe_token)?;
    Ok(
        db::subscribers::find_by_unsubscribe_token(&mut *db.conn().await?, unsubscribe_token)
            .await?,
    )
}

/// How many of today's subscribers subscribed on each day (UTC), by the
/// day they first asked.
pub(crate) async fn subscribed_per_day(
    db: &Database,
) -> Result<std::collections::BTreeMap<chrono::NaiveDate, i64>, Failure> {
    Ok(db::subscribers::subscribed_per_day(db).await?)
}
