//! Lists of pets (`findPetsByStatus`, `findPetsByTags`), whole or a page
//! at a time.
//!
//! A page (`limit`, `cursor`) is read from where the last one ended, through
//! an index, so it costs the same at the millionth pet as at the first; it
//! is answered whole, with the cursor of the next page if there is one.
//!
//! A whole list (upstream's answer, asked for without either) is read in
//! chunks the same way, by a task that sends it serialised in pieces of
//! about [`PIECE`] bytes through a channel that holds one, so that memory
//! does not grow with the list and the task reads no faster than the client
//! takes. Between chunks it holds nothing others wait for: no connection,
//! and no turn among the whole lists being read ([`Lists`]), so a few
//! clients pulling long lists take a bounded share of the server and a slow
//! client holds up nobody. A list that fits in one piece (the usual case) is
//! answered whole, with its length. A client that takes longer than
//! [`STREAM_DEADLINE`] for a list has it cut off (the connection is closed
//! mid-body, so it cannot take the piece it has for a whole list).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::channel::mpsc;
use futures::{SinkExt as _, StreamExt as _};
use serde::Serialize as _;

use super::Context;
use super::pets::Cached;
use crate::http::error::Error;
use crate::petstore::db::pets::PetSelect;
use crate::petstore::db::{self, topics};
use crate::petstore::model::{Pet, PetStatus};
use crate::petstore::wire::pet_xml::PetXml;
use crate::petstore::wire::{Format, bytes_response};
use crate::storage::{Database, Generations};

/// About how many bytes go out at a time; a list shorter than this is
/// answered whole.
const PIECE: usize = 64 * 1024;

/// How long a streamed list may hold its database connection.
const STREAM_DEADLINE: Duration = Duration::from_secs(60);

/// A list read and serialised.
pub(crate) enum Listing {
    /// All of it (it fitted in one piece).
    Whole(Bytes),
    /// The first piece and the rest, to be streamed.
    Streamed(Body),
}

impl Listing {
    /// The answer: the list in the negotiated format.
    pub(crate) fn into_response(self, format: Format) -> Response {
        match self {
            Listing::Whole(bytes) => bytes_response(format, bytes),
            Listing::Streamed(body) => {
                ([(header::CONTENT_TYPE, format.content_type())], body).into_response()
            }
        }
    }
}

/// A short list of `findPetsByStatus` as kept: the bytes sent, the pets it
/// lists, and the ticket of those pets when it was made.
#[derive(Debug)]
pub(crate) struct Kept {
    body: Bytes,
    ids: Vec<i64>,
    pets_ticket: u64,
}

/// What a kept list depends on, as its cache sees it: which pets have its
/// statuses. What each of them is ([`pets_ticket`]) is checked apart, so
/// that a pet renamed costs the list a join of the cached pets, not a read
/// of which pets it holds.
pub(crate) fn ticket(
    generations: &Generations,
    (statuses, _): &(BTreeSet<PetStatus>, Format),
) -> u64 {
    generations.ticket(statuses.iter().map(|status| topics::pets_with(*status)))
}

/// The ticket of what the pets `ids` are.
fn pets_ticket(generations: &Generations, ids: &[i64]) -> u64 {
    generations.ticket(ids.iter().map(|id| topics::pet(*id)))
}

/// `findPetsByStatus`'s whole list: a short one is kept, as the bytes
/// sent, until a pet of its statuses changes, and then made again from the
/// cached pets ([`from_cached_pets`]); a long one is streamed ([`whole`]).
pub(crate) async fn by_statuses(
    ctx: Context<'_>,
    statuses: BTreeSet<PetStatus>,
    format: Format,
) -> Result<Listing, Error> {
    let key = (statuses, format);
    let (held, begun) = ctx.caches.pet_lists.lookup(ctx.db, &key).await;
    if let Some(kept) = &held
        && kept.pets_ticket == pets_ticket(ctx.db.generations(), &kept.ids)
    {
        return Ok(Listing::Whole(Bytes::clone(&kept.body)));
    }
    if begun.tracked() {
        // The same pets, some of them changed: only those are looked up.
        let ids = held.map(|kept| kept.ids.clone());
        if let Some(kept) = from_cached_pets(ctx, &key.0, format, ids).await? {
            let body = Bytes::clone(&kept.body);
            ctx.caches.pet_lists.keep(begun, key, Arc::new(kept));
            return Ok(Listing::Whole(body));
        }
    }
    whole(ctx, format, PetSelect::with_statuses(&key.0)).await
}

/// `findPetsByTags`'s whole list: every pet that has any of `names`, once.
pub(crate) async fn by_tags(
    ctx: Context<'_>,
    names: &BTreeSet<&str>,
    format: Format,
) -> Result<Listing, Error> {
    whole(ctx, format, PetSelect::with_tags(names)).await
}

/// How many pets a page holds when a request asks for pages without saying.
pub(crate) const DEFAULT_PAGE: usize = 100;
/// The most pets a page may hold.
pub(crate) const LARGEST_PAGE: usize = 1000;

/// Which page a request asks for: the pets after the cursor's, at most
/// `limit` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageRequest {
    pub(crate) after: Option<Cursor>,
    pub(crate) limit: usize,
}

/// Where a page ends and the next begins, as clients see it: a token they
/// send back as they got it (the last pet's id, in digits). Every token the
/// document's pattern admits is a place in the list, so a client can never
/// send a well-formed cursor that is refused; the document still calls it
/// opaque, so that its form may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cursor(i64);

impl Cursor {
    /// The most digits a cursor has (so that it always fits an id).
    pub(crate) const MOST_DIGITS: usize = 18;

    /// The cursor `token` stands for; `None` for one that is not a cursor
    /// (not 1 to [`Self::MOST_DIGITS`] digits).
    pub(crate) fn parse(token: &str) -> Option<Cursor> {
        if token.is_empty()
            || token.len() > Self::MOST_DIGITS
            || !token.bytes().all(|byte| byte.is_ascii_digit())
        {
            return None;
        }
        token.parse::<i64>().ok().map(Cursor)
    }

    /// The token clients send back for the next page.
    pub(crate) fn token(self) -> String {
        self.0.to_string()
    }
}

/// A page of a list, serialised, and where the next one begins (none after
/// the last).
#[derive(Debug)]
pub(crate) struct Page {
    pub(crate) body: Bytes,
    pub(crate) next: Option<Cursor>,
}

/// The page `request` asks for of `findPetsByStatus`'s list.
pub(crate) async fn page_by_statuses(
    ctx: Context<'_>,
    statuses: &BTreeSet<PetStatus>,
    request: PageRequest,
    format: Format,
) -> Result<Page, Error> {
    page(ctx, &PetSelect::with_statuses(statuses), request, format).await
}

/// The page `request` asks for of `findPetsByTags`'s list.
pub(crate) async fn page_by_tags(
    ctx: Context<'_>,
    names: &BTreeSet<&str>,
    request: PageRequest,
    format: Format,
) -> Result<Page, Error> {
    page(ctx, &PetSelect::with_tags(names), request, format).await
}

/// One more pet than the page holds is read: whether it is there says
/// whether another page follows.
async fn page(
    ctx: Context<'_>,
    select: &PetSelect,
    request: PageRequest,
    format: Format,
) -> Result<Page, Error> {
    let after = request.after.map_or(0, |Cursor(id)| id);
    let mut pets = {
        let mut conn = ctx.db.conn().await?;
        select.page(&mut conn, after, request.limit + 1).await?
    };
    let next = if pets.len() > request.limit {
        pets.truncate(request.limit);
        pets.last().and_then(|pet| pet.id).map(Cursor)
    } else {
        None
    };
    let mut list = ListWriter::new(format);
    for pet in &pets {
        list.push(pet)?;
    }
    Ok(Page {
        body: list.finish(),
        next,
    })
}

/// What bounds the whole lists: how many are read at one moment, and how
/// long one may be (off unless the operator sets it).
#[derive(Debug)]
pub(crate) struct Lists {
    /// A turn for each whole list being read; a list waits for one before
    /// each chunk and gives it back before sending what it read.
    turns: tokio::sync::Semaphore,
    /// The most pets a whole list may hold (`petstore.max_unpaged_list`).
    most_unpaged: Option<u64>,
}

impl Lists {
    /// One whole list read at a time for each two cores (at least one): the
    /// others wait their turn between chunks, and requests that are no
    /// whole list keep the rest of the processor.
    pub(crate) fn new(most_unpaged: Option<u64>) -> Lists {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        Lists {
            turns: tokio::sync::Semaphore::new((cores / 2).max(1)),
            most_unpaged,
        }
    }
}

impl Lists {
    /// Refuses a whole list of `count` pets longer than the operator
    /// allows, saying how to ask for pages. A list kept in the cache passed
    /// here when it was made, and a write to it empties it.
    fn allow_whole(&self, count: u64) -> Result<(), Error> {
        match self.most_unpaged {
            Some(most) if count > most => Err(Error::bad_request(format!(
                "this list holds more than {most} pets, the most this server sends at once; \
                 ask for it a page at a time: add limit (up to {LARGEST_PAGE}) and follow \
                 the Link header's rel=\"next\" (its cursor) to the next page"
            ))),
            _ => Ok(()),
        }
    }
}

/// How many pets a whole list reads at a time.
const CHUNK: usize = 500;

/// Most pets in a list made of cached pets ([`from_cached_pets`]), so that
/// making one keeps a bounded number of pets in memory; a longer one is
/// read and streamed.
const MOST_CACHED_PETS: usize = 512;

/// `findPetsByStatus`'s list made of the pets' own cached answers
/// (`getPetById`'s), reading from the database only the list's ids (unless
/// they are known: `ids`, the pets of the list kept before) and the pets
/// that are not cached; `None` when it cannot be (the list is longer than
/// [`MOST_CACHED_PETS`] or than a [`PIECE`], which [`whole`] streams, or a
/// write moved a pet in or out of it while it was being made), for the
/// caller to read the list whole.
///
/// Read whole, a list emptied by a write to one of its pets cost a read of
/// every pet, each decoded and serialised again, about as often as its
/// pets changed; made of cached pets, it costs a join of their answers,
/// and a write that stored the pet it changed left it in the cache.
///
/// The caller has looked the list up in its cache and so caught up with
/// the other replicas' writes (`begun.tracked()`): every pet is then at
/// least as new as every write acknowledged before the request came.
/// Each pet, cached or read, must still have one of `statuses`: the ids
/// and the pets are read at different moments, and a write in between
/// (not yet acknowledged) could otherwise show a pet in a list it has just
/// left, or with what it was before it came in.
async fn from_cached_pets(
    ctx: Context<'_>,
    statuses: &BTreeSet<PetStatus>,
    format: Format,
    ids: Option<Vec<i64>>,
) -> Result<Option<Kept>, Error> {
    let mut conn = None;
    let ids = match ids {
        Some(ids) => ids,
        None => {
            // One connection for both reads: each pooled connection given
            // back is pinged by sqlx on its way into the pool.
            let conn = conn.insert(ctx.db.conn().await?);
            db::pets::ids_with_statuses(conn, statuses, MOST_CACHED_PETS + 1).await?
        }
    };
    if ids.len() > MOST_CACHED_PETS {
        return Ok(None);
    }
    ctx.lists.allow_whole(ids.len() as u64)?;
    // Taken before the pets are looked up: a pet that changes meanwhile
    // makes the list stale at once.
    let pets_ticket = pets_ticket(ctx.db.generations(), &ids);
    let mut pets = Vec::with_capacity(ids.len());
    let mut missing = Vec::new();
    for (at, &id) in ids.iter().enumerate() {
        let (held, begun) = ctx.caches.pets.lookup_caught_up(ctx.db, &(id, format));
        if held.is_none() {
            missing.push((at, id, begun));
        }
        pets.push(held);
    }
    if !missing.is_empty() {
        let conn = match &mut conn {
            Some(conn) => conn,
            None => conn.insert(ctx.db.conn().await?),
        };
        let missing_ids: Vec<i64> = missing.iter().map(|&(_, id, _)| id).collect();
        let read = db::pets::get_many(conn, &missing_ids).await?;
        let read: HashMap<i64, Pet> = read
            .into_iter()
            .filter_map(|pet| Some((pet.id?, pet)))
            .collect();
        for (at, id, begun) in missing {
            // Deleted since the ids were read.
            let Some(pet) = read.get(&id) else {
                return Ok(None);
            };
            let cached = Arc::new(Cached::of(format, pet)?);
            ctx.caches.pets.keep(begun, (id, format), cached.clone());
            pets[at] = Some(cached);
        }
    }
    drop(conn);
    let mut bodies = Vec::with_capacity(pets.len());
    let mut size = 0;
    for pet in &pets {
        match pet {
            Some(pet) if pet.status.is_some_and(|status| statuses.contains(&status)) => {
                size += pet.body.len();
                bodies.push(&pet.body);
            }
            _ => return Ok(None),
        }
    }
    if size > PIECE {
        return Ok(None);
    }
    Ok(Some(Kept {
        body: join(format, &bodies),
        ids,
        pets_ticket,
    }))
}

/// The list of pets whose answers (as `getPetById` writes them) are
/// `bodies`, as [`ListWriter`] writes it.
fn join(format: Format, bodies: &[&Bytes]) -> Bytes {
    let size: usize = bodies.iter().map(|body| body.len() + 1).sum();
    let mut list = Vec::with_capacity(size + XML_DECLARATION.len() + 16);
    match format {
        Format::Json => {
            list.push(b'[');
            for (n, body) in bodies.iter().enumerate() {
                if n > 0 {
                    list.push(b',');
                }
                list.extend_from_slice(body);
            }
            list.push(b']');
        }
        Format::Xml if bodies.is_empty() => {
            list.extend_from_slice(XML_DECLARATION.as_bytes());
            list.extend_from_slice(b"<pets/>");
        }
        Format::Xml => {
            list.extend_from_slice(XML_DECLARATION.as_bytes());
            list.extend_from_slice(b"<pets>");
            for body in bodies {
                list.extend_from_slice(
                    body.strip_prefix(XML_DECLARATION.as_bytes())
                        .unwrap_or(body),
                );
            }
            list.extend_from_slice(b"</pets>");
        }
    }
    Bytes::from(list)
}

/// A piece of the serialised list; `last` on the final one. A channel that
/// closes before the last piece means the list was cut off.
struct Piece {
    bytes: Bytes,
    last: bool,
}

/// The whole list `select` chooses, serialised in `format`: answered whole
/// if it fits in one piece, streamed otherwise.
///
/// Refused, saying how to page, when longer than the operator allows.
/// Failures before the first piece (no connection, a corrupt row early
/// on) are answered as errors; after it, the status is sent, so the body is
/// cut off and the client sees a broken transfer, never a short list.
async fn whole(ctx: Context<'_>, format: Format, select: PetSelect) -> Result<Listing, Error> {
    if let Some(most) = ctx.lists.most_unpaged {
        let count = {
            let mut conn = ctx.db.conn().await?;
            select.count_up_to(&mut conn, most + 1).await?
        };
        ctx.lists.allow_whole(count)?;
    }
    let (pieces, mut received) = mpsc::channel::<Result<Piece, Error>>(0);
    let db = ctx.db.clone();
    let lists = Arc::clone(ctx.lists);
    tokio::spawn(crate::telemetry::within_request(async move {
        let written =
            tokio::time::timeout(STREAM_DEADLINE, write(&db, &lists, format, &select, pieces));
        if written.await.is_err() {
            tracing::warn!("a list of pets was cut off: its client read it too slowly");
        }
    }));
    let first = received
        .next()
        .await
        .ok_or_else(|| Error::internal("listing pets", "the list's writer ended early"))??;
    if first.last {
        return Ok(Listing::Whole(first.bytes));
    }
    let rest = futures::stream::unfold(Some(received), |received| async move {
        let mut received = received?;
        match received.next().await {
            Some(Ok(Piece { bytes, last })) => Some((Ok(bytes), (!last).then_some(received))),
            Some(Err(err)) => Some((Err(std::io::Error::other(err.to_string())), None)),
            None => Some((
                Err(std::io::Error::other("the list of pets was cut off")),
                None,
            )),
        }
    });
    let body = futures::stream::once(async { Ok(first.bytes) }).chain(rest);
    Ok(Listing::Streamed(Body::from_stream(body)))
}

/// The task's side: reads the list a chunk at a time, each in its turn and
/// on a connection given back before the pieces go out; stops when the
/// reader is gone.
async fn write(
    db: &Database,
    lists: &Lists,
    format: Format,
    select: &PetSelect,
    mut pieces: mpsc::Sender<Result<Piece, Error>>,
) {
    let mut list = ListWriter::new(format);
    let mut after = 0;
    loop {
        let chunk = read_chunk(db, lists, select, after, &mut list).await;
        let (read, last_id) = match chunk {
            Ok(read) => read,
            Err(err) => {
                let _ = pieces.send(Err(err)).await;
                return;
            }
        };
        if read < CHUNK {
            break;
        }
        after = last_id;
        if list.len() >= PIECE {
            let piece = Piece {
                bytes: list.take(),
                last: false,
            };
            if pieces.send(Ok(piece)).await.is_err() {
                return;
            }
        }
    }
    let _ = pieces
        .send(Ok(Piece {
            bytes: list.finish(),
            last: true,
        }))
        .await;
}

/// Reads the pets after `after` (a chunk) in a turn of its own and writes
/// them to `list`: how many there were, and the last one's id.
async fn read_chunk(
    db: &Database,
    lists: &Lists,
    select: &PetSelect,
    after: i64,
    list: &mut ListWriter,
) -> Result<(usize, i64), Error> {
    let _turn = lists
        .turns
        .acquire()
        .await
        .map_err(|err| Error::internal("waiting to read a list of pets", err))?;
    let pets = {
        let mut conn = db.conn().await?;
        select.page(&mut conn, after, CHUNK).await?
    };
    let mut last_id = after;
    for pet in &pets {
        list.push(pet)?;
        last_id = pet.id.unwrap_or(last_id);
    }
    Ok((pets.len(), last_id))
}

/// Writes a list of pets piece by piece, as `Vec<Pet>` would be written
/// whole: a JSON array, or an XML `<pets>` document (`<pets/>` if empty).
struct ListWriter {
    format: Format,
    out: Vec<u8>,
    pets: usize,
}

const XML_DECLARATION: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";

impl ListWriter {
    fn new(format: Format) -> Self {
        ListWriter {
            format,
            out: Vec::with_capacity(PIECE + 4096),
            pets: 0,
        }
    }

    fn len(&self) -> usize {
        self.out.len()
    }

    fn push(&mut self, pet: &Pet) -> Result<(), Error> {
        let first = self.pets == 0;
        self.pets += 1;
        match self.format {
            Format::Json => {
                self.out.push(if first { b'[' } else { b',' });
                serde_json::to_writer(&mut self.out, pet)
                    .map_err(|err| Error::internal("cannot write a pet as JSON", err))
            }
            Format::Xml => {
                let mut xml = String::new();
                if first {
                    xml.push_str(XML_DECLARATION);
                    xml.push_str("<pets>");
                }
                let mut serializer = quick_xml::se::Serializer::new(&mut xml);
                serializer.expand_empty_elements(false);
                PetXml::from(pet)
                    .serialize(serializer)
                    .map_err(|err| Error::internal("cannot write a pet as XML", err))?;
                self.out.extend_from_slice(xml.as_bytes());
                Ok(())
            }
        }
    }

    /// What is written so far, to send.
    fn take(&mut self) -> Bytes {
        Bytes::from(std::mem::replace(
            &mut self.out,
            Vec::with_capacity(PIECE + 4096),
        ))
    }

    /// The rest, closed.
    fn finish(mut self) -> Bytes {
        let end = match (self.format, self.pets) {
            (Format::Json, 0) => "[]",
            (Format::Json, _) => "]",
            (Format::Xml, 0) => "<?xml version=\"1.0\" encoding=\"UTF-8\"?><pets/>",
            (Format::Xml, _) => "</pets>",
        };
        self.out.extend_from_slice(end.as_bytes());
        Bytes::from(self.out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::petstore::model::{Category, PetStatus, Tag};
    use crate::petstore::wire::ToXml as _;

    fn pets(count: usize) -> Vec<Pet> {
        (0..count)
            .map(|n| Pet {
                id: Some(n as i64 + 1),
                name: format!("pet <{n}> & \"friends\""),
                category: (n % 2 == 0).then(|| Category {
                    id: Some(7),
                    name: Some("Dogs".to_owned()),
                }),
                photo_urls: if n % 3 == 0 {
                    Vec::new()
                } else {
                    vec![format!("https://example.com/{n}.png")]
                },
                tags: vec![Tag {
                    id: Some(n as i64),
                    name: Some(format!("t{n}")),
                }],
                status: Some(PetStatus::Available),
            })
            .collect()
    }

    /// `bytes` are `pets` written whole in `format`, as one `Vec<Pet>`.
    fn assert_written_whole(bytes: Vec<u8>, pets: &Vec<Pet>, format: Format) {
        let whole = match format {
            Format::Json => serde_json::to_vec(pets).unwrap(),
            Format::Xml => pets.to_xml().unwrap().into_bytes(),
        };
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            String::from_utf8(whole).unwrap(),
            "{} pets as {format:?}",
            pets.len()
        );
    }

    /// Joined from the pets' single answers, the bytes are those of the
    /// list written whole.
    #[test]
    fn a_list_joined_from_single_pets_is_the_list_written_whole() {
        for count in [0, 1, 3] {
            let pets = pets(count);
            for format in [Format::Json, Format::Xml] {
                let bodies: Vec<Bytes> = pets
                    .iter()
                    .map(|pet| crate::petstore::wire::to_bytes(format, pet).unwrap())
                    .collect();
                let joined = join(format, &bodies.iter().collect::<Vec<_>>());
                assert_written_whole(joined.to_vec(), &pets, format);
            }
        }
    }

    /// Piece by piece, the bytes are those of the whole list written at once.
    #[test]
    fn a_list_written_in_pieces_is_the_list_written_whole() {
        for count in [0, 1, 3, 2000] {
            let pets = pets(count);
            for format in [Format::Json, Format::Xml] {
                let mut list = ListWriter::new(format);
                let mut bytes = Vec::new();
                for pet in &pets {
                    list.push(pet).unwrap();
                    if list.len() >= 1000 {
                        bytes.extend_from_slice(&list.take());
                    }
                }
                bytes.extend_from_slice(&list.finish());
                assert_written_whole(bytes, &pets, format);
            }
        }
    }
}
