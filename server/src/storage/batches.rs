//! Writes of one kind that arrive together go in together: one turn at the
//! database, a few statements for all of them, one commit.
//!
//! A durable write waits for its turn at the database (SQLite lets one
//! writer in at a time; on PostgreSQL, writers that take an id from
//! `id_sequences` wait for one another's commits on its row) and, within
//! it, for a round trip for every statement. Group commit already shares
//! the `fsync` among the SQLite writers waiting ([`super::group_commit`]);
//! the round trips remained, one writer after another, and bounded the
//! rate. Here one task takes the turn for every write waiting: while it
//! holds it, the writes that come meanwhile wait in a queue, and the next
//! turn writes all of them with one [`WriteInBatches::write`].
//!
//! Each write is still acknowledged only once the commit that holds it is
//! durable. A request dropped before its turn comes is left out (nothing of
//! it is written); one dropped later may still be written, as when an
//! answer is lost on the way back.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};

use super::{Database, StoreError, WriteTx};

/// Writes waiting for the writer task: beyond this, `add` waits for room.
const QUEUE: usize = 4096;

/// A kind of write that can go in with others of its kind.
pub(crate) trait WriteInBatches: Send + Sync + 'static {
    /// One write, as asked for.
    type Item: Send + 'static;
    /// What each writer is told once the batch is committed.
    type Outcome: Send + 'static;
    /// At most this many items in one batch.
    const MAX: usize;

    /// Writes `items` in `tx` and says, for each, in the same order, what
    /// became of it (and what it changed, through `tx`). An error undoes
    /// the whole batch and is every writer's answer.
    fn write(
        tx: &mut WriteTx,
        items: Vec<Self::Item>,
    ) -> impl Future<Output = Result<Vec<Self::Outcome>, StoreError>> + Send;
}

/// A write waiting for the writer task, and where its outcome goes.
struct Waiting<W: WriteInBatches> {
    item: W::Item,
    done: oneshot::Sender<Result<W::Outcome, StoreError>>,
}

/// The queue of one kind of write; the writer task ends when the last
/// handle is gone.
pub(crate) struct Batches<W: WriteInBatches> {
    queue: mpsc::Sender<Waiting<W>>,
    /// Turns the writer has taken (one batch each).
    #[cfg_attr(not(test), allow(dead_code))]
    turns: Arc<AtomicU64>,
}

impl<W: WriteInBatches> Clone for Batches<W> {
    fn clone(&self) -> Self {
        Self {
            queue: self.queue.clone(),
            turns: self.turns.clone(),
        }
    }
}

impl<W: WriteInBatches> std::fmt::Debug for Batches<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batches")
            .field(
                "waiting",
                &(self.queue.max_capacity() - self.queue.capacity()),
            )
            .finish_non_exhaustive()
    }
}

impl<W: WriteInBatches> Batches<W> {
    /// Starts the writer (a task).
    pub(crate) fn start(db: Database) -> Self {
        let (queue, waiting) = mpsc::channel(QUEUE);
        let turns = Arc::new(AtomicU64::new(0));
        tokio::spawn(write_waiting::<W>(db, waiting, turns.clone()));
        Self { queue, turns }
    }

    /// Writes `item` with the others waiting, and says what became of it
    /// once its commit is durable.
    pub(crate) async fn add(&self, item: W::Item) -> Result<W::Outcome, StoreError> {
        let gone = || StoreError::Unavailable("the server is shutting down".to_owned());
        let (done, outcome) = oneshot::channel();
        self.queue
            .send(Waiting { item, done })
            .await
            .map_err(|_| gone())?;
        outcome.await.map_err(|_| gone())?
    }

    /// How many turns at the database the writer has taken: the tests see
    /// the batching by it.
    #[cfg(test)]
    pub(crate) fn turns(&self) -> u64 {
        self.turns.load(Ordering::Relaxed)
    }

    /// Adds `items`, in their order, while `holder` keeps the writers'
    /// turn, then lets it go: the writer holds the first and finds the
    /// others queued behind it. Their outcomes, in the items' order.
    #[cfg(test)]
    #[allow(clippy::expect_used)]
    pub(crate) async fn add_while_held(
        &self,
        items: Vec<W::Item>,
        holder: WriteTx,
    ) -> Vec<Result<W::Outcome, StoreError>> {
        let count = items.len();
        let adding: Vec<_> = items
            .into_iter()
            .map(|item| {
                let batches = self.clone();
                tokio::spawn(async move { batches.add(item).await })
            })
            .collect();
        self.wait_until_queued(count.saturating_sub(1)).await;
        holder
            .commit()
            .await
            .expect("the holder of the turn commits");
        let mut outcomes = Vec::with_capacity(count);
        for added in adding {
            outcomes.push(added.await.expect("an add ends"));
        }
        outcomes
    }

    /// Waits (at most 10 s, then panics) until `count` writes wait in the
    /// queue, besides the one the writer holds.
    #[cfg(test)]
    #[allow(clippy::expect_used)]
    async fn wait_until_queued(&self, count: usize) {
        tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while self.queue.max_capacity() - self.queue.capacity() < count {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the writes never queued");
    }
}

/// The writer: takes the writers' turn for the first write waiting, then
/// writes it with every write that came meanwhile, and hands the commit to
/// a task of its own, so that the next writes can take the next turn.
async fn write_waiting<W: WriteInBatches>(
    db: Database,
    mut waiting: mpsc::Receiver<Waiting<W>>,
    turns: Arc<AtomicU64>,
) {
    while let Some(first) = waiting.recv().await {
        let mut tx = match db.begin_write().await {
            Ok(tx) => tx,
            Err(err) => {
                let _ = first.done.send(Err(err));
                continue;
            }
        };
        turns.fetch_add(1, Ordering::Relaxed);
        let mut batch = vec![first];
        while batch.len() < W::MAX {
            match waiting.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        // Those whose callers are gone are not written.
        batch.retain(|waiting| !waiting.done.is_closed());
        if batch.is_empty() {
            continue;
        }
        let (items, done): (Vec<_>, Vec<_>) = batch
            .into_iter()
            .map(|waiting| (waiting.item, waiting.done))
            .unzip();
        match W::write(&mut tx, items).await {
            Ok(outcomes) => {
                tokio::spawn(async move {
                    let committed = tx.commit().await;
                    let mut outcomes = outcomes.into_iter();
                    for done in done {
                        let outcome = outcomes.next().ok_or_else(|| {
                            StoreError::Database("a batch gave no outcome for a write".to_owned())
                        });
                        let _ = done.send(committed.clone().and(outcome));
                    }
                });
            }
            Err(err) => {
                // Dropping the transaction undoes what it did.
                drop(tx);
                for done in done {
                    let _ = done.send(Err(err.clone()));
                }
            }
        }
    }
}
