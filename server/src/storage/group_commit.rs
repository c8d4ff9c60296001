//! Group commit for SQLite: concurrent write transactions share one commit,
//! so that they share its `fsync`. Hand-written because neither sqlx nor
//! SQLite shares a commit among connections.
//!
//! SQLite lets one writer in at a time and, with `synchronous = FULL`,
//! waits for the disk at every commit. One commit per write makes the disk
//! the limit (each write waiting behind all the others' flushes). Here
//! writers still take turns, in the order they came (a fair mutex), but a
//! turn is a *savepoint* inside a batch transaction that stays open from
//! one writer to the next:
//!
//! - a writer takes the turn, opens a savepoint of its own in the open batch
//!   (beginning one, `BEGIN IMMEDIATE`, if none is open) and does its work;
//!   if it gives up, the next one to take the turn rolls back to its
//!   savepoint: its work is undone, the others' is kept;
//! - it then hands the turn on and waits for the batch's outcome; it is not
//!   acknowledged before then;
//! - the committer, a task of its own, asks for the turn whenever a writer
//!   finishes. The mutex is fair, so its turn comes after every writer that
//!   was already waiting: it commits all of them at once and tells each the
//!   outcome. Writers that come meanwhile make the next batch.
//!
//! Alone, a writer waits for its own commit as before (plus a task's
//! wake-up); under load, a commit carries as many writes as were waiting.
//! Nothing is acknowledged before its commit is on disk, and one writer's
//! failure undoes only its own work.
//!
//! If SQLite ends the transaction by itself (an I/O error, a full disk), a
//! later `SAVEPOINT` would quietly begin a new one and the earlier writers'
//! work would be gone. The batch therefore opens a savepoint of its own,
//! `batch`, and releases it just before `COMMIT`: that fails if the
//! transaction is no longer the one the batch began, and then every writer
//! in it is told so.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use sqlx::{Any, AnyConnection, AnyPool, Executor as _, Transaction};
use tokio::sync::{Mutex, Notify, OwnedMappedMutexGuard, OwnedMutexGuard, watch};

use super::changes::forget_changed;
use super::{Changes, Generations, Keepers, StoreError, Stored};

/// The batches' outcome as each writer receives it: `None` until the
/// committer has tried.
type Outcome = Option<Result<(), StoreError>>;

/// The SQLite writers' turn and the open batch; one per database.
pub(super) struct GroupCommit {
    pool: AnyPool,
    turn: Arc<Mutex<Turn>>,
    committer: Arc<Notify>,
}

impl Drop for GroupCommit {
    /// Lets the committer see that the database is gone.
    fn drop(&mut self) {
        self.committer.notify_one();
    }
}

#[derive(Default)]
struct Turn {
    open: Option<Batch>,
    /// Numbers the writers' savepoints (`m1`, `m2`, ...).
    members: u64,
}

/// A transaction that writers are adding their work to.
struct Batch {
    tx: Transaction<'static, Any>,
    outcome: watch::Sender<Outcome>,
    /// The savepoint of the last writer, if it left without committing:
    /// to roll back to before anything else is done in this batch.
    abandoned: Option<String>,
    /// What its writers changed, for the caches.
    changes: Changes,
    /// What its writers stored, for the caches to keep once it commits.
    stored: Vec<Stored>,
}

impl GroupCommit {
    /// Starts the committer (a task that ends with the database).
    pub(super) fn new(
        pool: AnyPool,
        commits: Arc<AtomicU64>,
        generations: Arc<Generations>,
        keepers: Arc<Keepers>,
    ) -> Arc<Self> {
        let group = Arc::new(Self {
            pool,
            turn: Arc::default(),
            committer: Arc::new(Notify::new()),
        });
        tokio::spawn(run_committer(
            Arc::downgrade(&group.turn),
            group.committer.clone(),
            commits,
            generations,
            keepers,
        ));
        group
    }

    /// Waits for the writers' turn and opens this writer's savepoint.
    pub(super) async fn begin(&self) -> Result<Member, StoreError> {
        let mut turn = self.turn.clone().lock_owned().await;
        settle_abandoned(&mut turn).await;
        if turn.open.is_none() {
            turn.open = Some(self.begin_batch().await?);
        }
        turn.members += 1;
        let savepoint = format!("m{}", turn.members);
        let mut batch = OwnedMutexGuard::try_map(turn, |turn| turn.open.as_mut())
            .map_err(|_| StoreError::Database("no batch open for a writer".to_owned()))?;
        // Not waited for: the writer's first statement runs after it, and
        // its outcome is not lost (if it failed, rolling back to it fails
        // too and the batch is rolled back whole, [`settle_abandoned`]; if
        // SQLite ended the transaction meanwhile, the batch's own savepoint
        // says so at the commit). A `SAVEPOINT` waited for cost a third of
        // the writers' rate.
        if let Err(err) =
            super::send_without_waiting(&mut batch.tx, &format!("SAVEPOINT {savepoint}"))
        {
            tracing::warn!(error = %err, savepoint, "a savepoint failed at once");
        }
        Ok(Member {
            batch,
            committer: self.committer.clone(),
            savepoint,
            released: false,
        })
    }

    /// Begins a batch, in a task of its own: the writer that asks may be
    /// dropped (its request gone) at any point, and sqlx's `begin_with`
    /// awaits once more after its `BEGIN IMMEDIATE` has run, before it has
    /// a `Transaction` that would roll back when dropped. Dropped there, it
    /// left the connection in the pool inside that transaction, holding
    /// SQLite's write lock for good: every later write failed after the
    /// busy timeout. In a task the begin always ends; if nobody waits for
    /// the batch any more, dropping it rolls it back.
    async fn begin_batch(&self) -> Result<Batch, StoreError> {
        super::note_wait(&self.pool);
        let pool = self.pool.clone();
        let begun = tokio::spawn(async move {
            // sqlx's own transaction, so that however this ends (an error,
            // nobody to take it) the connection goes back rolled back.
            let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
            tx.execute("SAVEPOINT batch").await?;
            Ok::<_, StoreError>(tx)
        });
        let tx = begun
            .await
            .map_err(|e| StoreError::Database(format!("beginning a write batch failed: {e}")))??;
        Ok(Batch {
            tx,
            outcome: watch::channel(None).0,
            abandoned: None,
            changes: Changes::nothing_cached(),
            stored: Vec::new(),
        })
    }
}

/// One writer's place in a batch: its savepoint, and the turn while it holds
/// it.
pub(super) struct Member {
    batch: OwnedMappedMutexGuard<Turn, Batch>,
    committer: Arc<Notify>,
    /// This writer's savepoint: a name of its own, so that undoing it can
    /// never undo another's.
    savepoint: String,
    /// It committed (handed its work to the batch).
    released: bool,
}

impl Member {
    pub(super) fn conn(&mut self) -> &mut AnyConnection {
        &mut self.batch.tx
    }

    /// Hands the turn on and waits until the batch is committed: only then
    /// is this writer's work on disk.
    pub(super) async fn commit(
        mut self,
        changes: Changes,
        stored: Vec<Stored>,
    ) -> Result<(), StoreError> {
        // The savepoint is not released: that would cost a statement, and
        // the batch's commit commits every savepoint in it. It stays, empty
        // of anything undoable, under the next writer's.
        self.released = true;
        // What an earlier writer in the batch stored and this one changed
        // again is no longer what the batch commits.
        forget_changed(&mut self.batch.stored, &changes);
        self.batch.changes.merge(changes);
        self.batch.stored.extend(stored);
        let mut outcome = self.batch.outcome.subscribe();
        drop(self);
        match outcome.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.clone().unwrap_or_else(|| {
                Err(StoreError::Database(
                    "a batch ended without an outcome".to_owned(),
                ))
            }),
            Err(_) => Err(StoreError::Unavailable(
                "the database closed before the commit".to_owned(),
            )),
        }
    }
}

impl Drop for Member {
    /// Hands the turn on. A writer that did not commit (it failed, or its
    /// request was dropped) leaves its savepoint to be rolled back to by
    /// whoever takes the turn next; the committer always does.
    fn drop(&mut self) {
        if !self.released {
            self.batch.abandoned = Some(std::mem::take(&mut self.savepoint));
        }
        self.committer.notify_one();
    }
}

/// Undoes the work of a writer that left without committing: it was the
/// last to write, so rolling back to its savepoint undoes its work and no
/// one else's. If that fails the batch is in no known state: all of it is
/// rolled back and its writers are told.
async fn settle_abandoned(turn: &mut Turn) {
    let Some(batch) = turn.open.as_mut() else {
        return;
    };
    let Some(savepoint) = batch.abandoned.clone() else {
        return;
    };
    // `abandoned` is cleared only once this is done: if this future is
    // dropped meanwhile, the next one does it again (it is idempotent).
    match batch.tx.execute(&*format!("ROLLBACK TO {savepoint}")).await {
        Ok(_) => batch.abandoned = None,
        Err(err) => {
            let err = StoreError::from(err);
            tracing::error!(error = %err, "a write batch could not undo one writer's work; rolling the whole batch back");
            if let Some(batch) = turn.open.take() {
                // Dropping the transaction rolls it back.
                batch.outcome.send_replace(Some(Err(err)));
            }
        }
    }
}

/// Commits the open batch, if any, and tells its writers.
async fn commit_batch(
    turn: &mut Turn,
    commits: &AtomicU64,
    generations: &Generations,
    keepers: &Keepers,
) {
    settle_abandoned(turn).await;
    let Some(mut batch) = turn.open.take() else {
        return;
    };
    let committed = match batch.tx.execute("RELEASE batch").await {
        Ok(_) => batch.tx.commit().await,
        Err(err) => Err(err),
    };
    match committed {
        Ok(()) => {
            // Made stale before anyone is told, so that a cache never
            // serves an entry older than a write already acknowledged.
            commits.fetch_add(1, Ordering::AcqRel);
            generations.advance(&batch.changes);
            // Still holding the turn: no later commit can move them again
            // before what this one stored is kept.
            keepers.keep(generations, &batch.stored);
            batch.outcome.send_replace(Some(Ok(())));
        }
        Err(err) => {
            let err = StoreError::from(err);
            tracing::error!(error = %err, "a write batch failed to commit");
            batch.outcome.send_replace(Some(Err(err)));
        }
    }
}

/// The committer: whenever a writer has finished, it waits for the turn
/// (behind every writer already waiting) and commits the batch.
async fn run_committer(
    turn: Weak<Mutex<Turn>>,
    finished: Arc<Notify>,
    commits: Arc<AtomicU64>,
    generations: Arc<Generations>,
    keepers: Arc<Keepers>,
) {
    loop {
        finished.notified().await;
        let Some(turn) = turn.upgrade() else {
            return;
        };
        let mut turn = turn.lock_owned().await;
        commit_batch(&mut turn, &commits, &generations, &keepers).await;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::pin::pin;
    use std::task::Poll;

    use crate::storage::{Database, WriteTx};

    use std::time::Duration;

    use crate::storage::temporary_sqlite as database;
    use crate::storage::temporary_sqlite_with as database_with;

    async fn add(tx: &mut WriteTx, name: &str) {
        sqlx::query("INSERT INTO id_sequences (name, last_id) VALUES ($1, 0)")
            .bind(name)
            .execute(tx.conn())
            .await
            .unwrap();
    }

    async fn names(db: &Database) -> Vec<String> {
        sqlx::query_scalar("SELECT name FROM id_sequences WHERE name LIKE 'w%' ORDER BY name")
            .fetch_all(db.pool())
            .await
            .unwrap()
    }

    /// Writers queued behind one another share a commit, and one that
    /// gives up in the middle of the batch (after a failed statement of its
    /// own) takes only its own work with it.
    #[tokio::test]
    async fn queued_writers_commit_together_and_a_writer_that_gives_up_undoes_only_its_own_work() {
        let (_dir, db) = database().await;
        let commits_before = db.commits();

        let mut first = db.begin_write().await.unwrap();
        add(&mut first, "w1").await;

        let second = pin!(async {
            let mut tx = db.begin_write().await.unwrap();
            add(&mut tx, "w2").await;
            tx.commit().await
        });
        let gives_up = pin!(async {
            let mut tx = db.begin_write().await.unwrap();
            add(&mut tx, "w3").await;
            // A statement that fails (the name is taken): SQLite undoes the
            // statement only; the writer then drops its transaction.
            let taken = sqlx::query("INSERT INTO id_sequences (name, last_id) VALUES ('w1', 0)")
                .execute(tx.conn())
                .await;
            assert!(taken.is_err());
        });
        let fourth = pin!(async {
            let mut tx = db.begin_write().await.unwrap();
            add(&mut tx, "w4").await;
            tx.commit().await
        });
        // Each queues for the turn (the first holds it) before it is let go.
        let (mut second, mut gives_up, mut fourth) = (second, gives_up, fourth);
        assert!(matches!(futures::poll!(second.as_mut()), Poll::Pending));
        assert!(matches!(futures::poll!(gives_up.as_mut()), Poll::Pending));
        assert!(matches!(futures::poll!(fourth.as_mut()), Poll::Pending));
        let (first, second, (), fourth) = tokio::join!(first.commit(), second, gives_up, fourth);
        first.unwrap();
        second.unwrap();
        fourth.unwrap();

        assert_eq!(names(&db).await, ["w1", "w2", "w4"]);
        assert_eq!(
            db.commits() - commits_before,
            1,
            "the four writers shared one commit"
        );
    }

    /// What a batch's writers stored is kept once it commits, after the
    /// generations moved on: the last value of each topic, and nothing a
    /// later writer in the batch changed again without storing it, nor
    /// anything of a writer that gave up.
    #[tokio::test]
    async fn a_batch_keeps_what_its_writers_stored_and_nothing_changed_after() {
        use std::sync::{Arc, Mutex};

        use crate::storage::{Topic, TopicKind};

        const KIND: TopicKind = TopicKind::new(b'k');
        let topic = |id| Topic::of(KIND, id);
        let (_dir, db) = database().await;
        let kept: Arc<Mutex<Vec<(i64, u32, u64)>>> = Arc::default();
        let keeper = kept.clone();
        db.keepers().add(
            KIND,
            Box::new(move |generations, id, value| {
                let value = *value.downcast_ref::<u32>().unwrap();
                // The ticket shows that the commit moved the topic on first.
                let ticket = generations.ticket([Topic::of(KIND, id)]);
                keeper.lock().unwrap().push((id, value, ticket));
            }),
        );
        let before: Vec<u64> = (1..=4)
            .map(|id| db.generations().ticket([topic(id)]))
            .collect();

        let mut first = db.begin_write().await.unwrap();
        add(&mut first, "w1").await;
        first.stored(topic(1), Arc::new(10_u32));
        first.stored(topic(2), Arc::new(20_u32));
        first.stored(topic(1), Arc::new(11_u32));
        let second = pin!(async {
            let mut tx = db.begin_write().await.unwrap();
            add(&mut tx, "w2").await;
            // Changed again, nothing stored: what the first stored is stale.
            tx.changed([topic(2)]);
            tx.stored(topic(3), Arc::new(30_u32));
            tx.commit().await
        });
        let gives_up = pin!(async {
            let mut tx = db.begin_write().await.unwrap();
            tx.stored(topic(4), Arc::new(40_u32));
        });
        let (mut second, mut gives_up) = (second, gives_up);
        assert!(matches!(futures::poll!(second.as_mut()), Poll::Pending));
        assert!(matches!(futures::poll!(gives_up.as_mut()), Poll::Pending));
        let (first, second, ()) = tokio::join!(first.commit(), second, gives_up);
        first.unwrap();
        second.unwrap();

        let kept = kept.lock().unwrap().clone();
        let values: Vec<(i64, u32)> = kept.iter().map(|&(id, value, _)| (id, value)).collect();
        assert_eq!(values, [(1, 11), (3, 30)]);
        for (id, _, ticket) in kept {
            let at = usize::try_from(id - 1).unwrap();
            assert_ne!(ticket, before[at], "topic {id} kept before it moved on");
        }
    }

    /// A write that is rolled back keeps nothing it stored.
    #[tokio::test]
    async fn a_write_rolled_back_keeps_nothing() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};

        use crate::storage::{Topic, TopicKind};

        const KIND: TopicKind = TopicKind::new(b'k');
        let (_dir, db) = database().await;
        let kept = Arc::new(AtomicUsize::new(0));
        let keeper = kept.clone();
        db.keepers().add(
            KIND,
            Box::new(move |_, _, _| {
                keeper.fetch_add(1, Ordering::SeqCst);
            }),
        );
        {
            let mut tx = db.begin_write().await.unwrap();
            tx.stored(Topic::of(KIND, 1), Arc::new(1_u32));
        }
        let mut tx = db.begin_write().await.unwrap();
        add(&mut tx, "w1").await;
        tx.commit().await.unwrap();
        assert_eq!(kept.load(Ordering::SeqCst), 0);
    }

    /// A writer whose request is dropped while it holds the turn leaves
    /// nothing behind, and the next writer goes on.
    #[tokio::test]
    async fn a_dropped_writer_leaves_nothing_and_the_next_goes_on() {
        let (_dir, db) = database().await;
        {
            let mut tx = db.begin_write().await.unwrap();
            add(&mut tx, "w1").await;
        }
        let mut tx = db.begin_write().await.unwrap();
        add(&mut tx, "w2").await;
        tx.commit().await.unwrap();
        assert_eq!(names(&db).await, ["w2"]);
    }

    /// A writer dropped at any point of beginning a batch (its request
    /// gone) leaves no transaction open behind it: the next writers begin
    /// and commit. sqlx's `begin_with` awaits once more after its `BEGIN
    /// IMMEDIATE` has run; a writer dropped there left the connection in the
    /// pool inside that transaction, holding SQLite's write lock for good,
    /// and every later write failed after the busy timeout (seen as writes
    /// hanging after a load test's clients went away).
    #[tokio::test]
    async fn a_writer_dropped_while_a_batch_begins_leaves_no_transaction_open() {
        const CUTS: u64 = 1500;
        let (_dir, db) = database_with(Some(3)).await;
        // Cut short after 0, 1, 2, ... microseconds of polling: the cuts
        // fall before, during and after the `BEGIN IMMEDIATE` and its
        // acknowledgement (sqlx runs it on a thread of its own meanwhile).
        for cut in 0..CUTS {
            crate::storage::poll_then_drop(db.begin_write(), cut);
            let mut tx = tokio::time::timeout(Duration::from_secs(10), db.begin_write())
                .await
                .unwrap_or_else(|_| panic!("after a cut at {cut} us, no write can begin"))
                .unwrap_or_else(|e| panic!("after a cut at {cut} us: {e}"));
            add(&mut tx, &format!("w{cut}")).await;
            tx.commit().await.unwrap();
        }
        assert_eq!(names(&db).await.len(), CUTS as usize);
    }

    /// What a writer acknowledged is in the file: another connection, opened
    /// after the commit returned, reads it.
    #[tokio::test]
    async fn an_acknowledged_write_is_committed() {
        let (dir, db) = database().await;
        let mut tx = db.begin_write().await.unwrap();
        add(&mut tx, "w1").await;
        tx.commit().await.unwrap();
        let url = format!("sqlite://{}", dir.path().join("db.sqlite").display());
        let other = Database::connect(&url).await.unwrap();
        assert_eq!(names(&other).await, ["w1"]);
    }
}
