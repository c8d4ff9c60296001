//! What a write changed, for the read caches (`read_cache.rs`): each write
//! transaction names the [`Topic`]s it changed, and its commit moves their
//! generations on before the write is acknowledged. A cached value holds the
//! [`Generations::ticket`] of its topics taken before it was read from the
//! database; it is served only while that ticket is still current. So a read
//! that starts after a write was acknowledged never gets what the write
//! replaced, and a write empties only what depends on what it changed.
//! Hand-written because a cache library evicts by size and time, not by
//! what a committed write changed.
//!
//! A transaction that names nothing changed *everything* (every ticket
//! moves): forgetting to name a topic costs the caches' contents, never their
//! correctness. Writes that touch nothing a cache holds (users, sessions,
//! keys, emails, analytics) say so with [`Changes::nothing_cached`].

use std::any::Any;
use std::hash::{BuildHasher as _, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

/// A kind of thing cached values depend on, named by the service that
/// caches it: a lowercase ASCII letter, not `f` (the change feed's fences
/// take it). Two kinds that share a letter move together, which costs a
/// cache a miss, never a stale answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TopicKind(u8);

impl TopicKind {
    /// The kind named `letter` (checked when the constant is made).
    pub(crate) const fn new(letter: u8) -> TopicKind {
        assert!(
            letter.is_ascii_lowercase() && letter != b'f',
            "a topic kind is a lowercase ASCII letter other than f"
        );
        TopicKind(letter)
    }

    /// The kind's letter, as the change feed writes it.
    pub(crate) fn letter(self) -> char {
        char::from(self.0)
    }

    /// The kind a letter names, if one can.
    pub(crate) fn from_letter(letter: u8) -> Option<TopicKind> {
        (letter.is_ascii_lowercase() && letter != b'f').then_some(TopicKind(letter))
    }
}

/// Something cached values depend on: one thing of a kind (a pet, by its
/// id), or a kind that is one thing (id 0: the inventory, the content).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Topic {
    pub(crate) kind: TopicKind,
    pub(crate) id: i64,
}

impl Topic {
    /// The thing `id` of `kind`.
    pub(crate) const fn of(kind: TopicKind, id: i64) -> Topic {
        Topic { kind, id }
    }

    /// A kind that is one thing.
    pub(crate) const fn whole(kind: TopicKind) -> Topic {
        Topic::of(kind, 0)
    }
}

/// What one write transaction changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Changes {
    /// Not said: everything may have changed.
    #[default]
    Everything,
    /// These topics (none: nothing any cache holds).
    Only(Vec<Topic>),
}

impl Changes {
    /// Nothing any cache holds.
    pub(crate) fn nothing_cached() -> Changes {
        Changes::Only(Vec::new())
    }

    /// Adds `topics` to what was changed.
    pub(crate) fn add(&mut self, topics: impl IntoIterator<Item = Topic>) {
        if let Changes::Only(changed) = self {
            changed.extend(topics);
        }
    }

    /// Both `self` and `other`.
    pub(crate) fn merge(&mut self, other: Changes) {
        match other {
            Changes::Everything => *self = Changes::Everything,
            Changes::Only(topics) => self.add(topics),
        }
    }
}

/// A value a write stored for a topic (a pet as written), for the caches to
/// keep as if they had just read it ([`Keepers`]).
#[derive(Clone)]
pub(crate) struct Stored {
    pub(crate) topic: Topic,
    pub(crate) value: Arc<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stored")
            .field("topic", &self.topic)
            .finish_non_exhaustive()
    }
}

/// Drops from `stored` what `changes` changes again: a later write to the
/// same topic that stored nothing makes the earlier value stale.
pub(crate) fn forget_changed(stored: &mut Vec<Stored>, changes: &Changes) {
    match changes {
        Changes::Everything => stored.clear(),
        Changes::Only(topics) => stored.retain(|value| !topics.contains(&value.topic)),
    }
}

/// Keeps a value a write stored: given the generations (moved on by its
/// commit), the id of the value's topic and the value.
pub(crate) type Keeper = Box<dyn Fn(&Generations, i64, &(dyn Any + Send + Sync)) + Send + Sync>;

/// Who keeps what the writes store, by the kind of its topic: the caches
/// register here (storage knows no service's types, hence `Any`).
///
/// A cache emptied by every write to what everyone reads (a pet renamed
/// while it is read thousands of times a second) sent the next reader to
/// the database for the value the write had in hand: kept at the commit, it
/// is the next reader's hit. Only on SQLite, where one writer commits at a
/// time and the committer keeps the values after the generations moved on
/// and before the next commit can, so a value kept is never older than the
/// last acknowledged write. PostgreSQL's commits are not ordered with this
/// process's generations (two commits of one row may move them in either
/// order), so there the next read goes to the database as before.
#[derive(Default)]
pub(crate) struct Keepers(RwLock<Vec<(TopicKind, Keeper)>>);

impl std::fmt::Debug for Keepers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keepers").finish_non_exhaustive()
    }
}

impl Keepers {
    /// `keeper` keeps the values stored for topics of `kind`.
    pub(crate) fn add(&self, kind: TopicKind, keeper: Keeper) {
        self.0
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push((kind, keeper));
    }

    /// Hands each value in `stored` to the keepers of its topic's kind; by
    /// the committer, once the commit that wrote them moved the generations
    /// on and before any later one does.
    pub(crate) fn keep(&self, generations: &Generations, stored: &[Stored]) {
        if stored.is_empty() {
            return;
        }
        let keepers = self.0.read().unwrap_or_else(PoisonError::into_inner);
        for value in stored {
            for (_, keeper) in keepers.iter().filter(|(kind, _)| *kind == value.topic.kind) {
                keeper(generations, value.topic.id, value.value.as_ref());
            }
        }
    }
}

/// Topics share this many counters (a topic's is picked by its hash): two
/// topics that share one move together, which costs a cache a miss, never a
/// stale answer. 512 KiB of them: with 1,024, each write (a new pet, an
/// order) also emptied whatever pet shared its counter, and in the bench's
/// mix 4 in 10 of the pets' misses were such (17.4k against 10.3k a run).
const STRIPES: usize = 65_536;

/// The generations of every topic: counters that only go up.
pub(crate) struct Generations {
    everything: AtomicU64,
    stripes: Box<[AtomicU64]>,
    /// foldhash (seeded per process) rather than SipHash: each cached read
    /// hashes its topics, and SipHash's cost shows on the cheapest reads.
    hasher: foldhash::fast::RandomState,
}

impl std::fmt::Debug for Generations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generations").finish_non_exhaustive()
    }
}

impl Default for Generations {
    fn default() -> Self {
        Generations {
            everything: AtomicU64::new(0),
            stripes: (0..STRIPES).map(|_| AtomicU64::new(0)).collect(),
            hasher: foldhash::fast::RandomState::default(),
        }
    }
}

impl Generations {
    fn stripe(&self, topic: &Topic) -> &AtomicU64 {
        let index = usize::try_from(self.hasher.hash_one(topic) % STRIPES as u64).unwrap_or(0);
        &self.stripes[index]
    }

    /// A number that moves whenever any of `topics` changes: the sum of
    /// their counters (and of the one for everything), each of which only
    /// goes up. Equal tickets taken at two moments mean that no change to
    /// these topics was made visible in between.
    pub(crate) fn ticket(&self, topics: impl IntoIterator<Item = Topic>) -> u64 {
        topics
            .into_iter()
            .fold(self.everything.load(Ordering::Acquire), |sum, topic| {
                sum.wrapping_add(self.stripe(&topic).load(Ordering::Acquire))
            })
    }

    /// Moves on the generations of what `changes` names: called after the
    /// write's commit, before it is acknowledged.
    pub(crate) fn advance(&self, changes: &Changes) {
        match changes {
            Changes::Everything => {
                self.everything.fetch_add(1, Ordering::AcqRel);
            }
            Changes::Only(topics) => {
                for topic in topics {
                    self.stripe(topic).fetch_add(1, Ordering::AcqRel);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: TopicKind = TopicKind::new(b'p');
    const LIST: TopicKind = TopicKind::new(b's');

    #[test]
    fn a_ticket_moves_with_its_topics_and_with_everything_only() {
        let generations = Generations::default();
        let pet = |id| [Topic::of(ONE, id)];
        let before = generations.ticket(pet(1));
        let other = (2..).find(|id| {
            !std::ptr::eq(
                generations.stripe(&Topic::of(ONE, *id)),
                generations.stripe(&Topic::of(ONE, 1)),
            )
        });
        let other = other.unwrap_or(2);
        generations.advance(&Changes::Only(vec![Topic::of(ONE, other)]));
        assert_eq!(generations.ticket(pet(1)), before, "another pet's change");
        generations.advance(&Changes::nothing_cached());
        assert_eq!(generations.ticket(pet(1)), before, "nothing cached");
        generations.advance(&Changes::Only(vec![Topic::of(ONE, 1)]));
        let after_own = generations.ticket(pet(1));
        assert_ne!(after_own, before, "its own change");
        generations.advance(&Changes::Everything);
        assert_ne!(generations.ticket(pet(1)), after_own, "everything");
        let lists = [Topic::of(LIST, 0), Topic::of(LIST, 2)];
        let list = generations.ticket(lists);
        generations.advance(&Changes::Only(vec![Topic::of(LIST, 2)]));
        assert_ne!(generations.ticket(lists), list, "one of its topics");
    }
}
