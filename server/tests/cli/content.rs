//! The content file after the first start: `content import` loads what
//! changed (and says what), `--dry-run` only says; `SIGHUP` loads it in a
//! running server, which lives on; a start whose file differs says so.

use std::path::{Path, PathBuf};

use end_to_end_tests::process::ServerProcess;
use end_to_end_tests::{
    Db, FreshDatabase, TestServer, http, on_every_database, send_json, wait_until,
};

use super::{WAIT, cli};

on_every_database!(
    an_import_loads_what_changed_and_a_dry_run_only_says,
    sighup_loads_the_content_file_and_the_server_lives_on,
    a_start_whose_file_differs_says_so,
);

const SAMPLE: &str = include_str!("../../../content/sample.toml");

/// The sample content, renamed `name`, with one more project.
fn changed_content(name: &str) -> String {
    let renamed = SAMPLE.replacen("name = \"Ada Example\"", &format!("name = \"{name}\""), 1);
    assert_ne!(renamed, SAMPLE, "the sample names its site Ada Example");
    format!(
        "{renamed}\n[[projects]]\nslug = \"lighthouse\"\ntitle = \"Lighthouse\"\n\
         summary = \"A new project.\"\ndescription = \"Added to the file after the first start.\"\ntags = []\nfeatured = false\n"
    )
}

/// A content file in `folder`, holding the sample content.
fn content_file(folder: &Path) -> PathBuf {
    let file = folder.join("content.toml");
    std::fs::write(&file, SAMPLE).unwrap();
    file
}

/// The binary started on `database` with a content file (the sample's, in
/// its data folder): the file and the process.
fn started_with_content_file(database: &FreshDatabase) -> (PathBuf, ServerProcess) {
    let file = content_file(database.data_dir());
    let file_env = file.to_str().unwrap().to_owned();
    let env = [(
        "PETSTORE_PORTFOLIO_PORTFOLIO__CONTENT_FILE",
        file_env.as_str(),
    )];
    let server = ServerProcess::start(
        Path::new(env!("CARGO_BIN_EXE_petstore-portfolio")),
        database,
        &[],
        &env,
    );
    (file, server)
}

/// `kill -HUP`.
fn hang_up(server: &ServerProcess) {
    let sent = std::process::Command::new("kill")
        .args(["-HUP", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

async fn site_name(url: &str) -> String {
    let (status, _, site) = send_json(http().get(format!("{url}/api/site-info"))).await;
    assert_eq!(status, 200, "{site}");
    site["name"].as_str().unwrap_or_default().to_owned()
}

/// `content import --file <file> [--dry-run] --json` on the server's
/// database: what it printed.
fn import(server: &TestServer, file: &Path, dry_run: bool) -> serde_json::Value {
    let mut args = vec!["content", "import", "--file", file.to_str().unwrap()];
    if dry_run {
        args.push("--dry-run");
    }
    cli(server, &args)
}

fn assert_no_change(diff: &serde_json::Value) {
    assert_eq!(diff["site_changed"], false, "{diff}");
    assert_eq!(diff["added"], serde_json::json!([]), "{diff}");
    assert_eq!(diff["changed"], serde_json::json!([]), "{diff}");
}

async fn an_import_loads_what_changed_and_a_dry_run_only_says(db: Db) {
    let on_postgres = matches!(db, Db::Postgres(_));
    let folder = tempfile::tempdir().unwrap();
    let file = content_file(folder.path());
    let configured = file.clone();
    let server =
        TestServer::start_with(db, move |c| c.portfolio.content_file = Some(configured)).await;
    let unchanged = import(&server, &file, true);
    assert_no_change(&unchanged);

    std::fs::write(&file, changed_content("Ada Imported")).unwrap();
    let dry = import(&server, &file, true);
    assert_eq!(dry["site_changed"], true, "{dry}");
    assert_eq!(
        dry["added"],
        serde_json::json!(["project lighthouse"]),
        "{dry}"
    );
    assert_eq!(
        site_name(&server.url).await,
        "Ada Example",
        "a dry run writes nothing"
    );

    let done = import(&server, &file, false);
    assert_eq!(done, dry);
    // PostgreSQL tells a running server of the change; on SQLite it waits
    // for a SIGHUP (the next test).
    if on_postgres {
        wait_until(WAIT, "the server serves the imported content", async || {
            site_name(&server.url).await == "Ada Imported"
        })
        .await;
        let (status, _, _) = send_json(http().get(server.at("/api/projects/lighthouse"))).await;
        assert_eq!(status, 200);
    }
    // Imported: nothing differs any more.
    let again = import(&server, &file, true);
    assert_no_change(&again);
    server.stop().await;
}

async fn sighup_loads_the_content_file_and_the_server_lives_on(db: Db) {
    let database = FreshDatabase::create(db).await;
    let (file, server) = started_with_content_file(&database);
    let file_env = file.to_str().unwrap().to_owned();
    assert_eq!(site_name(&server.url).await, "Ada Example");
    std::fs::write(&file, changed_content("Ada Reloaded")).unwrap();
    // Twice: a second SIGHUP finds nothing to load, and changes nothing.
    hang_up(&server);
    hang_up(&server);
    wait_until(WAIT, "SIGHUP loads the content file", async || {
        site_name(&server.url).await == "Ada Reloaded"
    })
    .await;
    // Alive, and serving.
    let (status, _, _) = send_json(http().get(server.at("/api/projects/lighthouse"))).await;
    assert_eq!(status, 200);

    // Imported by the CLI beside it: a SIGHUP has it served (on SQLite,
    // whose writes the server is not told of, too).
    std::fs::write(&file, changed_content("Ada Imported")).unwrap();
    let imported = std::process::Command::new(env!("CARGO_BIN_EXE_petstore-portfolio"))
        .args(["content", "import", "--file", &file_env])
        .env("PETSTORE_PORTFOLIO_DATABASE_URL", &database.url)
        .env("PETSTORE_PORTFOLIO_DATA_DIR", database.data_dir())
        .env_remove("PETSTORE_PORTFOLIO_CONFIG")
        .output()
        .unwrap();
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    let printed = String::from_utf8_lossy(&imported.stdout);
    assert!(printed.contains("~ site"), "{printed}");
    hang_up(&server);
    wait_until(WAIT, "SIGHUP serves what the CLI imported", async || {
        site_name(&server.url).await == "Ada Imported"
    })
    .await;
    server.terminate();
}

async fn a_start_whose_file_differs_says_so(db: Db) {
    let database = FreshDatabase::create(db).await;
    // The first start loads the file into the empty database.
    let (file, first) = started_with_content_file(&database);
    first.terminate();
    let file_env = file.to_str().unwrap().to_owned();
    std::fs::write(&file, changed_content("Ada Edited")).unwrap();
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_petstore-portfolio"))
        .args(["--bind", "127.0.0.1:0", "--database-url", &database.url])
        .arg("--data-dir")
        .arg(database.data_dir())
        .env_remove("PETSTORE_PORTFOLIO_CONFIG")
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .env("PETSTORE_PORTFOLIO_PORTFOLIO__CONTENT_FILE", &file_env)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = server.stderr.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines.send(line);
        }
    });
    let said = loop {
        match received.recv_timeout(WAIT) {
            Ok(line) if line.contains("the content file differs from the database") => break line,
            Ok(_) => {}
            Err(e) => panic!("no warning that the content file differs ({e})"),
        }
    };
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        said.contains("~ site") && said.contains("+ project lighthouse"),
        "{said}"
    );
    assert!(said.contains("content import"), "{said}");
}
