//! Promises of the server's code that the compiler cannot keep, checked on
//! its source as text:
//!
//! - every operation whose `#[utoipa::path]` declares the `Idempotency-Key`
//!   header reads its body through `Idempotent` (which looks the key up
//!   only once the handler's credential extractors have passed), and no
//!   other handler does: an operation that declared the header without it
//!   would take keys and keep nothing;
//! - the services' storage writes only in write transactions, whose
//!   commits tell the read caches what changed: a statement run on the
//!   pool would leave them serving what it replaced.

use std::path::Path;

/// The parameter that declares the `Idempotency-Key` header.
const DECLARES_KEY: &str = "IdempotencyKeyHeader";
/// The extractor that reads a keyed body.
const READS_KEYED_BODY: &str = "Idempotent<";

/// Each handler of the server's source whose declaration of
/// `Idempotency-Key` and use of `Idempotent` disagree, as `file:line: why`.
pub fn idempotency_keys_unread(root: &Path) -> anyhow::Result<Vec<String>> {
    Ok(crate::rust_text::read_rust_files(root, "server/src")?
        .iter()
        .flat_map(|(file, text)| keys_unread_in(file, text))
        .collect())
}

/// [`idempotency_keys_unread`] for one file's text.
pub fn keys_unread_in(file: &str, text: &str) -> Vec<String> {
    // A test's own handlers (one that forgets its key, on purpose) are no
    // operation of the server's.
    let code = crate::rust_text::shipped_code(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    let mut annotation: Option<bool> = None;
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index].trim();
        if line.starts_with("#[utoipa::path(") {
            annotation = Some(false);
        }
        if line.contains(DECLARES_KEY) && annotation.is_some() {
            annotation = Some(true);
        }
        if let Some(declares) = annotation
            && line.contains("async fn ")
        {
            let start = index;
            let mut signature = String::new();
            while index < lines.len() {
                signature.push_str(lines[index]);
                if lines[index].contains(") ->") || lines[index].trim_end().ends_with('{') {
                    break;
                }
                index += 1;
            }
            let reads = signature.contains(READS_KEYED_BODY);
            let name = line
                .split("async fn ")
                .nth(1)
                .and_then(|rest| rest.split('(').next())
                .unwrap_or("?");
            if declares && !reads {
                found.push(format!(
                    "{file}:{}: {name} declares Idempotency-Key but does not read its body \
                     through Idempotent<..>: its answers would not be kept",
                    start + 1
                ));
            }
            if reads && !declares {
                found.push(format!(
                    "{file}:{}: {name} reads its body through Idempotent<..> but its \
                     #[utoipa::path] does not declare {DECLARES_KEY}",
                    start + 1
                ));
            }
            annotation = None;
        }
        index += 1;
    }
    found
}

/// The services' storage modules.
const SERVICE_STORAGE: [&str; 2] = ["server/src/petstore/db", "server/src/portfolio/db"];

/// What runs a statement on the pool, outside a write transaction.
const ON_THE_POOL: [&str; 2] = ["execute(db.pool())", "execute(&db.pool"];

/// Each line of the services' storage that runs a statement on the pool,
/// as `file:line: why`.
pub fn writes_outside_transactions(root: &Path) -> anyhow::Result<Vec<String>> {
    let mut found = Vec::new();
    for folder in SERVICE_STORAGE {
        for (file, text) in crate::rust_text::read_rust_files(root, folder)? {
            found.extend(writes_on_the_pool(&file, &text));
        }
    }
    Ok(found)
}

/// [`writes_outside_transactions`] for one file's text.
pub fn writes_on_the_pool(file: &str, text: &str) -> Vec<String> {
    let code = crate::rust_text::code_only(text);
    code.lines()
        .enumerate()
        .filter(|(_, line)| ON_THE_POOL.iter().any(|call| line.contains(call)))
        .map(|(index, _)| {
            format!(
                "{file}:{}: a statement on the pool, outside a write transaction, would not \
                 reach the read caches: use db.begin_write()",
                index + 1
            )
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    const KEYED: &str = r#"
#[utoipa::path(
    post, path = "/pet",
    params(crate::idempotency::IdempotencyKeyHeader),
)]
pub(crate) async fn add_pet(
    _auth: Authorized<Pets>,
    Idempotent(Body(pet)): Idempotent<Body<Pet>>,
) -> Result<Reply<Pet>, Error> {
"#;

    #[test]
    fn a_keyed_operation_that_reads_through_idempotent_passes() {
        assert!(keys_unread_in("pet.rs", KEYED).is_empty());
    }

    #[test]
    fn a_keyed_operation_that_reads_its_body_plainly_is_named() {
        let plain = KEYED.replace(
            "Idempotent(Body(pet)): Idempotent<Body<Pet>>",
            "Body(pet): Body<Pet>",
        );
        let found = keys_unread_in("pet.rs", &plain);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("pet.rs:6: add_pet declares"),
            "{found:?}"
        );
    }

    #[test]
    fn a_tests_own_handler_is_no_operation() {
        let plain = KEYED.replace(
            "Idempotent(Body(pet)): Idempotent<Body<Pet>>",
            "Body(pet): Body<Pet>",
        );
        let in_tests = format!("#[cfg(test)]\nmod tests {{\n{plain}\n}}\n}}\n");
        assert!(keys_unread_in("pet.rs", &in_tests).is_empty());
    }

    #[test]
    fn idempotent_without_the_declared_header_is_named() {
        let undeclared = KEYED.replace("params(crate::idempotency::IdempotencyKeyHeader),", "");
        let found = keys_unread_in("pet.rs", &undeclared);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("does not declare"), "{found:?}");
    }

    #[test]
    fn a_write_on_the_pool_is_named_and_one_in_a_transaction_is_not() {
        let code = "let mut tx = db.begin_write().await?;\n\
                    sqlx::query(\"DELETE FROM pets\").execute(tx.conn()).await?;\n\
                    // execute(db.pool()) in a comment\n\
                    sqlx::query(\"DELETE FROM pets\").execute(db.pool()).await?;";
        let found = writes_on_the_pool("pets.rs", code);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("pets.rs:4: a statement on the pool"),
            "{found:?}"
        );
    }

    #[test]
    fn the_services_storage_writes_only_in_transactions() {
        let found = writes_outside_transactions(&crate::codegen::workspace_root())
            .expect("the server's source is readable");
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn the_servers_handlers_keep_the_promise() {
        let found = idempotency_keys_unread(&crate::codegen::workspace_root())
            .expect("the server's source is readable");
        assert!(found.is_empty(), "{found:#?}");
    }
}
