//! Password hashing with argon2id on a bounded pool.
//!
//! argon2id with the OWASP parameters (m = 19 MiB, t = 2 iterations,
//! p = 1 lane) costs about 19 MiB and tens of milliseconds a hash, on
//! purpose. Unbounded, a storm of logins would run hundreds at once and take
//! gigabytes. So hashes run on a fixed set of threads, one per core, each
//! with its own memory block that it reuses while hashes wait (the allocator
//! does not see 19 MiB come and go at each in a storm) and gives back when
//! none does; requests wait in a bounded queue, and beyond it are
//! answered 503 with `Retry-After`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};

use argon2::password_hash::{Output, ParamsString, PasswordHash, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use subtle::ConstantTimeEq as _;
use tokio::sync::oneshot;

use crate::core::failure::Failure;

/// The OWASP parameters for argon2id (Password Storage Cheat Sheet):
/// 19 MiB of memory, 2 iterations, 1 lane, a 32-byte hash.
pub(crate) fn owasp_params() -> Params {
    // These are argon2's defaults, written out: a new version of the crate
    // changing its defaults must not change ours.
    Params::new(19 * 1024, 2, 1, Some(32)).unwrap_or_default()
}

/// How long a caller refused for a full queue is told to wait (seconds).
const RETRY_AFTER_SECS: u64 = 1;

enum Job {
    Hash {
        password: String,
        reply: oneshot::Sender<Result<String, String>>,
    },
    Verify {
        password: String,
        hash: Option<String>,
        reply: oneshot::Sender<bool>,
    },
}

/// The hashing pool: a bounded queue in front of one thread per core.
/// Cloning shares the pool; the threads end when the last clone is dropped.
#[derive(Clone)]
pub(crate) struct Hasher {
    jobs: SyncSender<Job>,
    /// Jobs sent and not yet taken by a thread.
    queued: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Hasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hasher").finish_non_exhaustive()
    }
}

impl Hasher {
    /// `threads` hashing threads (0: one per core) behind a queue of
    /// `queue` waiting jobs.
    pub(crate) fn start(threads: usize, queue: usize) -> std::io::Result<Hasher> {
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let (jobs, waiting) = sync_channel(queue);
        let waiting = Arc::new(Mutex::new(waiting));
        let queued = Arc::new(AtomicUsize::new(0));
        for n in 0..threads {
            let (waiting, queued) = (waiting.clone(), queued.clone());
            std::thread::Builder::new()
                .name(format!("argon2-{n}"))
                .spawn(move || work(&waiting, &queued))?;
        }
        Ok(Hasher { jobs, queued })
    }

    /// The argon2id hash of a password (PHC string format, salt included).
    pub(crate) async fn hash(&self, password: String) -> Result<String, Failure> {
        let (reply, answer) = oneshot::channel();
        self.submit(Job::Hash { password, reply })?;
        answer
            .await
            .map_err(|e| Failure::fault("the password hashing thread ended", e))?
            .map_err(|e| Failure::fault("cannot hash a password", e))
    }

    /// Whether `password` matches `hash`. Without a hash (no such user) a
    /// dummy hash is checked all the same, so that a wrong username takes as
    /// long as a wrong password; the answer is then always false.
    pub(crate) async fn verify(
        &self,
        password: String,
        hash: Option<String>,
    ) -> Result<bool, Failure> {
        let (reply, answer) = oneshot::channel();
        self.submit(Job::Verify {
            password,
            hash,
            reply,
        })?;
        answer
            .await
            .map_err(|e| Failure::fault("the password checking thread ended", e))
    }

    fn submit(&self, job: Job) -> Result<(), Failure> {
        // Counted before it is sent: a thread may take it at once.
        crate::telemetry::metrics::password_hash_queued(1.0);
        self.queued.fetch_add(1, Ordering::AcqRel);
        self.jobs.try_send(job).map_err(|e| {
            crate::telemetry::metrics::password_hash_queued(-1.0);
            self.queued.fetch_sub(1, Ordering::AcqRel);
            refusal(e)
        })
    }
}

/// Why a password check could not be queued.
fn refusal(e: TrySendError<Job>) -> Failure {
    match e {
        TrySendError::Full(_) => {
            crate::telemetry::metrics::password_hash_refused();
            Failure::Busy {
                message: "too many password checks at once; retry in a moment".into(),
                per_caller: false,
                retry_after: RETRY_AFTER_SECS,
            }
        }
        TrySendError::Disconnected(_) => {
            Failure::fault("password hashing", "the hashing threads are gone")
        }
    }
}

/// A hashing thread: takes jobs until the pool is dropped, hashing in its
/// own memory block, which it gives back whenever no job waits.
fn work(waiting: &Mutex<Receiver<Job>>, queued: &AtomicUsize) {
    let mut memory: Vec<Block> = Vec::new();
    loop {
        if queued.load(Ordering::Acquire) == 0 {
            // Nothing waits: the block goes back to the system (19 MiB a
            // thread, most of the server's memory otherwise). A storm of
            // logins keeps it; a login now and then allocates it again,
            // a few milliseconds against the hash's tens.
            memory = Vec::new();
        }
        let job = {
            let Ok(waiting) = waiting.lock() else { return };
            match waiting.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        queued.fetch_sub(1, Ordering::AcqRel);
        crate::telemetry::metrics::password_hash_queued(-1.0);
        match job {
            Job::Hash { password, reply } => {
                let _ = reply.send(hash_now(&mut memory, password.as_bytes()));
            }
            Job::Verify {
                password,
                hash,
                reply,
            } => {
                let known = hash.is_some();
                let hash = hash.as_deref().unwrap_or_else(|| dummy_hash());
                let matches = verify_now(&mut memory, password.as_bytes(), hash);
                let _ = reply.send(known && matches);
            }
        }
    }
}

/// `params`' hash of `password` with `salt`, computed in `memory` (grown to
/// the size `params` needs, and kept).
fn compute(
    memory: &mut Vec<Block>,
    params: Params,
    password: &[u8],
    salt: &[u8],
) -> Result<Vec<u8>, argon2::Error> {
    let mut out = vec![0_u8; params.output_len().unwrap_or(Params::DEFAULT_OUTPUT_LEN)];
    if memory.len() < params.block_count() {
        memory.resize(params.block_count(), Block::default());
    }
    let blocks = params.block_count();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params).hash_password_into_with_memory(
        password,
        salt,
        &mut out,
        &mut memory[..blocks],
    )?;
    Ok(out)
}

fn hash_now(memory: &mut Vec<Block>, password: &[u8]) -> Result<String, String> {
    let params = owasp_params();
    let salt = SaltString::encode_b64(&crate::core::secret::random_bytes::<16>())
        .map_err(|e| e.to_string())?;
    let mut salt_bytes = [0_u8; 64];
    let salt_bytes = salt
        .decode_b64(&mut salt_bytes)
        .map_err(|e| e.to_string())?;
    let out = compute(memory, params.clone(), password, salt_bytes).map_err(|e| e.to_string())?;
    let hash = PasswordHash {
        algorithm: argon2::ARGON2ID_IDENT,
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params).map_err(|e| e.to_string())?,
        salt: Some(salt.as_salt()),
        hash: Some(Output::new(&out).map_err(|e| e.to_string())?),
    };
    Ok(hash.to_string())
}

/// Whether `password` matches the PHC string `hash` (its own parameters and
/// salt), compared in constant time.
fn verify_now(memory: &mut Vec<Block>, password: &[u8], hash: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(hash) else {
        return false;
    };
    let (Ok(params), Some(salt), Some(expected)) =
        (Params::try_from(&parsed), parsed.salt, parsed.hash)
    else {
        return false;
    };
    let mut salt_bytes = [0_u8; 64];
    let Ok(salt_bytes) = salt.decode_b64(&mut salt_bytes) else {
        return false;
    };
    match compute(memory, params, password, salt_bytes) {
        Ok(out) => bool::from(out.as_slice().ct_eq(expected.as_bytes())),
        Err(_) => false,
    }
}

/// A hash of a password nobody has.
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| hash_now(&mut Vec::new(), b"no such user").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_and_no_other() {
        let hasher = Hasher::start(1, 4).unwrap();
        let hash = hasher.hash("correct horse".into()).await.unwrap();
        assert!(
            hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{hash}"
        );
        assert!(
            hasher
                .verify("correct horse".into(), Some(hash.clone()))
                .await
                .unwrap()
        );
        assert!(
            !hasher
                .verify("wrong horse".into(), Some(hash))
                .await
                .unwrap()
        );
        assert!(!hasher.verify("anything".into(), None).await.unwrap());
    }

    #[tokio::test]
    async fn hashes_of_the_argon2_crate_verify_too() {
        use argon2::password_hash::PasswordHasher as _;
        let salt = SaltString::encode_b64(&[7; 16]).unwrap();
        let stored = Argon2::default()
            .hash_password(b"sample", &salt)
            .unwrap()
            .to_string();
        let hasher = Hasher::start(1, 4).unwrap();
        assert!(hasher.verify("sample".into(), Some(stored)).await.unwrap());
    }

    #[tokio::test]
    async fn beyond_the_queue_callers_are_told_to_retry() {
        // One thread, one waiting place: of many at once, some are refused.
        let hasher = Hasher::start(1, 1).unwrap();
        let attempts: Vec<_> = (0..8)
            .map(|_| {
                let hasher = hasher.clone();
                tokio::spawn(async move { hasher.hash("p".into()).await })
            })
            .collect();
        let mut refused = 0;
        for attempt in attempts {
            if let Err(e) = attempt.await.unwrap() {
                assert!(
                    matches!(
                        e,
                        Failure::Busy {
                            per_caller: false,
                            retry_after: RETRY_AFTER_SECS,
                            ..
                        }
                    ),
                    "{e:?}"
                );
                refused += 1;
            }
        }
        assert!(refused > 0, "the queue is bounded");
    }
}
