//! Writes that arrive together go in together: one turn at the database, a
//! few statements for each kind of write, one commit. Hand-written because
//! what may go in together is the services' rules, not a pool's.
//!
//! A durable write waits for its turn at the database (SQLite lets one
//! writer in at a time; on PostgreSQL, writers that take an id from
//! `id_sequences` wait for one another's commits on its row) and, within
//! it, for a round trip for every statement. Group commit already shares
//! the `fsync` among the SQLite writers waiting ([`super::group_commit`]);
//! the round trips remained, one writer after another, and bounded the
//! rate. Here one task, the [`Writer`], takes the turn for every write
//! waiting: while it holds it, the writes that come meanwhile wait in a
//! queue, and the next turn writes all of them, each kind with one
//! [`WriteInBatches::write`], in one transaction.
//!
//! Every kind (new pets, new orders, replaced pets) shares the one writer
//! and so the turn's transaction: on PostgreSQL each transaction costs a
//! `BEGIN`, a notice for the other replicas and a `COMMIT` (round trips,
//! and a WAL flush that notifying commits cannot share), and with a writer
//! of its own each kind made small batches of its own (in the mixed load,
//! 289 of 478 batches of orders held a single order).
//!
//! Each write is still acknowledged only once the commit that holds it is
//! durable. A request dropped before its turn comes is left out (nothing of
//! it is written); one dropped later may still be written, as when an
//! answer is lost on the way back. A kind's write that fails undoes the
//! whole turn, and every write in it is told so.

use std::any::Any;
use std::marker::PhantomData;
use std::pin::Pin;
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
    /// At most this many items of this kind at one turn.
    const MAX: usize;

    /// Writes `items` in `tx` and says, for each, in the same order, what
    /// became of it (and what it changed, through `tx`). An error undoes
    /// the whole turn and is every writer's answer.
    fn write(
        tx: &mut WriteTx,
        items: Vec<Self::Item>,
    ) -> impl Future<Output = Result<Vec<Self::Outcome>, StoreError>> + Send;
}

/// The writer every kind of write in batches shares; its task ends when
/// the last handle is gone.
#[derive(Clone)]
pub(crate) struct Writer {
    queue: mpsc::Sender<Box<dyn Pending>>,
    /// Turns the writer has taken (one transaction each).
    #[cfg_attr(not(test), allow(dead_code))]
    turns: Arc<AtomicU64>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field(
                "waiting",
                &(self.queue.max_capacity() - self.queue.capacity()),
            )
            .finish_non_exhaustive()
    }
}

impl Writer {
    /// Starts the writer (a task).
    pub(crate) fn start(db: Database) -> Self {
        let (queue, waiting) = mpsc::channel(QUEUE);
        let turns = Arc::new(AtomicU64::new(0));
        tokio::spawn(write_waiting(db, waiting, turns.clone()));
        Self { queue, turns }
    }

    /// How many turns at the database the writer has taken: the tests see
    /// the batching by it.
    #[cfg(test)]
    pub(crate) fn turns(&self) -> u64 {
        self.turns.load(Ordering::Relaxed)
    }

    /// Waits (at most 10 s, then panics) until `count` writes wait in the
    /// queue, besides those the writer holds.
    #[cfg(test)]
    #[allow(clippy::expect_used)]
    pub(crate) async fn wait_until_queued(&self, count: usize) {
        tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while self.queue.max_capacity() - self.queue.capacity() < count {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the writes never queued");
    }
}

/// The writes of kind `W`, through the writer they share with the other
/// kinds.
pub(crate) struct Batches<W: WriteInBatches> {
    writer: Writer,
    kind: PhantomData<fn() -> W>,
}

impl<W: WriteInBatches> Clone for Batches<W> {
    fn clone(&self) -> Self {
        Self::on(&self.writer)
    }
}

impl<W: WriteInBatches> std::fmt::Debug for Batches<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batches")
            .field("writer", &self.writer)
            .finish()
    }
}

impl<W: WriteInBatches> Batches<W> {
    /// Writes of this kind, through `writer`.
    pub(crate) fn on(writer: &Writer) -> Self {
        Self {
            writer: writer.clone(),
            kind: PhantomData,
        }
    }

    /// Writes of this kind, through a writer of their own (the tests').
    #[cfg(test)]
    pub(crate) fn start(db: Database) -> Self {
        Self::on(&Writer::start(db))
    }

    /// Writes `item` with the others waiting, and says what became of it
    /// once its commit is durable.
    pub(crate) async fn add(&self, item: W::Item) -> Result<W::Outcome, StoreError> {
        let gone = || StoreError::Unavailable("the server is shutting down".to_owned());
        let (done, outcome) = oneshot::channel();
        self.writer
            .queue
            .send(Box::new(Waiting::<W> { item, done }))
            .await
            .map_err(|_| gone())?;
        outcome.await.map_err(|_| gone())?
    }

    /// How many turns at the database the writer has taken.
    #[cfg(test)]
    pub(crate) fn turns(&self) -> u64 {
        self.writer.turns()
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
        self.writer.wait_until_queued(count.saturating_sub(1)).await;
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
}

/// A write waiting for the writer task, and where its outcome goes.
struct Waiting<W: WriteInBatches> {
    item: W::Item,
    done: oneshot::Sender<Result<W::Outcome, StoreError>>,
}

/// A write waiting in the writer's queue, whatever its kind.
trait Pending: Send {
    /// Its caller is gone: it is not written.
    fn abandoned(&self) -> bool;
    /// Joins the turn's batch of its kind (starting it if there is none);
    /// gives itself back if that batch is full.
    fn join(self: Box<Self>, turn: &mut Vec<Box<dyn Batch>>) -> Result<(), Box<dyn Pending>>;
    /// Tells its caller that it cannot be written.
    fn fail(self: Box<Self>, err: StoreError);
}

/// The writes of one kind at a turn.
trait Batch: Send {
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// Writes them in `tx`. What it returns tells each writer what became
    /// of its write, given the outcome of the turn's commit.
    fn write<'a>(
        self: Box<Self>,
        tx: &'a mut WriteTx,
    ) -> Pin<Box<dyn Future<Output = Result<Tell, StoreError>> + Send + 'a>>;
    /// Tells each writer that the turn failed.
    fn fail(self: Box<Self>, err: &StoreError);
}

/// Tells the writers of a batch what became of their writes, given the
/// outcome of the commit.
type Tell = Box<dyn FnOnce(Result<(), StoreError>) + Send>;

/// The batch of kind `W` at a turn.
struct KindBatch<W: WriteInBatches>(Vec<Waiting<W>>);

impl<W: WriteInBatches> Pending for Waiting<W> {
    fn abandoned(&self) -> bool {
        self.done.is_closed()
    }

    fn join(self: Box<Self>, turn: &mut Vec<Box<dyn Batch>>) -> Result<(), Box<dyn Pending>> {
        let of_kind = turn
            .iter_mut()
            .find_map(|batch| batch.as_any_mut().downcast_mut::<KindBatch<W>>());
        match of_kind {
            Some(batch) if batch.0.len() >= W::MAX => return Err(self),
            Some(batch) => batch.0.push(*self),
            None => turn.push(Box::new(KindBatch(vec![*self]))),
        }
        Ok(())
    }

    fn fail(self: Box<Self>, err: StoreError) {
        let _ = self.done.send(Err(err));
    }
}

impl<W: WriteInBatches> Batch for KindBatch<W> {
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn write<'a>(
        self: Box<Self>,
        tx: &'a mut WriteTx,
    ) -> Pin<Box<dyn Future<Output = Result<Tell, StoreError>> + Send + 'a>> {
        Box::pin(async move {
            let (items, done): (Vec<_>, Vec<_>) = self
                .0
                .into_iter()
                .map(|waiting| (waiting.item, waiting.done))
                .unzip();
            let outcomes = match W::write(tx, items).await {
                Ok(outcomes) => outcomes,
                Err(err) => {
                    for done in done {
                        let _ = done.send(Err(err.clone()));
                    }
                    return Err(err);
                }
            };
            let tell: Tell = Box::new(move |committed: Result<(), StoreError>| {
                let mut outcomes = outcomes.into_iter();
                for done in done {
                    let outcome = outcomes.next().ok_or_else(|| {
                        StoreError::Database("a batch gave no outcome for a write".to_owned())
                    });
                    let _ = done.send(committed.clone().and(outcome));
                }
            });
            Ok(tell)
        })
    }

    fn fail(self: Box<Self>, err: &StoreError) {
        for waiting in self.0 {
            let _ = waiting.done.send(Err(err.clone()));
        }
    }
}

/// The writer: takes the writers' turn for the first write waiting, then
/// writes it with every write that came meanwhile, each kind in one batch,
/// and hands the commit to a task of its own, so that the next writes can
/// take the next turn.
async fn write_waiting(
    db: Database,
    mut waiting: mpsc::Receiver<Box<dyn Pending>>,
    turns: Arc<AtomicU64>,
) {
    // A write that did not fit in the last turn (its kind's batch was
    // full): the first of the next.
    let mut carried: Option<Box<dyn Pending>> = None;
    loop {
        let first = match carried.take() {
            Some(first) => first,
            None => match waiting.recv().await {
                Some(first) => first,
                None => return,
            },
        };
        let mut tx = match db.begin_write().await {
            Ok(tx) => tx,
            Err(err) => {
                first.fail(err);
                continue;
            }
        };
        turns.fetch_add(1, Ordering::Relaxed);
        let mut turn: Vec<Box<dyn Batch>> = Vec::new();
        let mut next = Some(first);
        while let Some(pending) = next.take() {
            // Those whose callers are gone are not written.
            if !pending.abandoned()
                && let Err(full) = pending.join(&mut turn)
            {
                carried = Some(full);
                break;
            }
            next = waiting.try_recv().ok();
        }
        if turn.is_empty() {
            continue;
        }
        let mut tells = Vec::with_capacity(turn.len());
        let mut batches = turn.into_iter();
        let mut failed = None;
        for batch in batches.by_ref() {
            match batch.write(&mut tx).await {
                Ok(tell) => tells.push(tell),
                Err(err) => {
                    failed = Some(err);
                    break;
                }
            }
        }
        match failed {
            None => {
                tokio::spawn(async move {
                    let committed = tx.commit().await;
                    for tell in tells {
                        tell(committed.clone());
                    }
                });
            }
            Some(err) => {
                // Dropping the transaction undoes what it did: the kinds
                // written before are told so, those after are not written.
                drop(tx);
                for tell in tells {
                    tell(Err(err.clone()));
                }
                for batch in batches {
                    batch.fail(&err);
                }
            }
        }
    }
}
