//! The on-disk cache of compiled components.
//!
//! Compiling the QuickJS guest takes seconds; loading its compiled form takes
//! milliseconds. A compiled component is kept under the cache directory as
//! `<key>.cwasm`, where the key is a SHA-256 of the component's SHA-256 (the
//! built-in guest's is computed at build time) and of the engine's
//! [`precompile_compatibility_hash`](Engine::precompile_compatibility_hash)
//! (which covers the wasmtime version and every setting that changes code).
//!
//! The file is wasmtime's compiled artifact as it is, written to a temporary
//! file, synced and renamed into place, so a reader sees a whole file or none.
//! It is loaded by mapping it ([`Component::deserialize_file`]): nothing is
//! read or copied up front, pages come from the page cache as the code runs,
//! and the memory image of the snapshot is mapped copy-on-write straight from
//! the file. A file wasmtime cannot load (cut short, not an artifact, another
//! engine's) is removed and recompiled. The bytes are not checksummed: that
//! meant reading and hashing all 6 MB at every start (a third of a CLI run),
//! and the only writer is this module's atomic rename into a directory only
//! the user can write (whoever can change a file there can already run code
//! as the user). Any cache error (a read-only disk, a directory others can
//! write, ...) falls back to compiling in memory, and says so once on stderr.
//!
//! The directory tidies itself when something is stored in it (after a
//! compilation, so never on a warm start): an artifact no process has loaded
//! for [`UNUSED_FOR`] goes (a load marks its file's modification time, at
//! most once every [`MARK_EVERY`]), and so does a partial file left for
//! over [`PARTIAL_STALE`] (by a writer killed mid-write). Only names of the
//! forms written here are ever removed.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Changes whenever the file layout above changes.
const FORMAT: &[u8] = b"wasmwire-cwasm-2";

/// `$XDG_CACHE_HOME/wasmwire`, else `$HOME/.cache/wasmwire`, else (a
/// process with neither, such as a service or a scrubbed environment)
/// `wasmwire-<uid>` in the system's temporary directory. Whichever it is,
/// it is used only if it is a directory of this user's that nobody else can
/// write (checked when the cache is opened).
pub fn default_cache_dir() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute("XDG_CACHE_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".cache")))
        .map(|dir| dir.join("wasmwire"))
        .or_else(|| {
            // SAFETY: geteuid has no preconditions and cannot fail.
            let uid = unsafe { libc::geteuid() };
            Some(std::env::temp_dir().join(format!("wasmwire-{uid}")))
        })
}

/// Makes `dir` if it is missing, private to this user, and checks that it is
/// a directory this user owns that no one else can write: compiled code is
/// loaded from it, so a directory another user can plant files in (a shared
/// temporary directory, say) must not be trusted.
fn private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true).mode(0o700);
    builder
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is not a directory of this user's that only it can write",
            dir.display()
        ));
    }
    Ok(())
}

/// Says once per process, on stderr, that the cache is not used and why:
/// every run then pays for a compilation, which should not be a mystery.
fn warn_once(why: &str) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        eprintln!("wasmwire: not using the compiled-component cache ({why}); compiling in memory");
    });
}

/// The component compiled for `engine`: from `dir` if it holds it, else
/// compiled now (and stored in `dir` for next time).
pub(crate) fn load_or_compile(
    engine: &Engine,
    component: &[u8],
    dir: Option<&Path>,
) -> wasmtime::Result<Component> {
    load_or_build(engine, component, b"as-is", dir, |bytes| Ok(bytes.to_vec()))
}

/// Like [`load_or_compile`], for a component that is first turned into
/// another by `prepare` (pre-initialisation): the cached artifact is the
/// compiled output of `prepare`, keyed by the original bytes and `variant`,
/// so a warm cache skips `prepare` as well as the compilation.
pub(super) fn load_or_build(
    engine: &Engine,
    component: &[u8],
    variant: &[u8],
    dir: Option<&Path>,
    prepare: impl FnOnce(&[u8]) -> wasmtime::Result<Vec<u8>>,
) -> wasmtime::Result<Component> {
    let Some(dir) = dir else {
        return Component::new(engine, &prepare(component)?);
    };
    if let Err(why) = private_dir(dir) {
        warn_once(&why);
        return Component::new(engine, &prepare(component)?);
    }
    let path = artifact(engine, component, variant, dir);
    if let Some(compiled) = load(engine, &path) {
        return Ok(compiled);
    }
    let compiled = engine.precompile_component(&prepare(component)?)?;
    // SAFETY: `compiled` was produced just now by `precompile_component` on
    // this very engine.
    let loaded = unsafe { Component::deserialize(engine, &compiled)? };
    // Best effort: a cache that cannot be written only costs the next process
    // a compilation.
    if let Err(e) = store(dir, &path, &compiled) {
        warn_once(&format!("cannot write {}: {e}", path.display()));
    }
    Ok(loaded)
}

/// Stores `compiled` (`component` as-is, compiled for `engine`, loaded
/// from elsewhere) in `dir` if it is missing there, for the next process
/// that uses `dir`. Best effort, as every write to the cache.
pub(crate) fn keep(engine: &Engine, component: &[u8], compiled: &Component, dir: &Path) {
    if let Err(why) = private_dir(dir) {
        warn_once(&why);
        return;
    }
    let path = artifact(engine, component, b"as-is", dir);
    if path.is_file() {
        return;
    }
    match compiled.serialize() {
        Ok(bytes) => {
            if let Err(e) = store(dir, &path, &bytes) {
                warn_once(&format!("cannot write {}: {e}", path.display()));
            }
        }
        Err(e) => warn_once(&format!("cannot serialize a compiled component: {e}")),
    }
}

/// Where the artifact of `component` (made as `variant`) for `engine` is
/// kept in `dir`.
fn artifact(engine: &Engine, component: &[u8], variant: &[u8], dir: &Path) -> PathBuf {
    dir.join(format!("{}{EXTENSION}", key(engine, component, variant)))
}

fn key(engine: &Engine, component: &[u8], variant: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(FORMAT);
    hasher.update(
        u64::try_from(variant.len())
            .unwrap_or(u64::MAX)
            .to_le_bytes(),
    );
    hasher.update(variant);
    hasher.update(component_digest(component));
    engine
        .precompile_compatibility_hash()
        .hash(&mut DigestHasher(&mut hasher));
    hex(&hasher.finalize())
}

/// The SHA-256 of `component`: the one build.rs computed when it is the
/// built-in guest or TypeScript compiler (the same bytes, not a copy of
/// them), else hashed now.
fn component_digest(component: &[u8]) -> [u8; 32] {
    if std::ptr::eq(component, crate::sandbox::GUEST_COMPONENT) {
        return crate::sandbox::GUEST_COMPONENT_SHA256;
    }
    if std::ptr::eq(component, crate::source::TYPESCRIPT_COMPONENT) {
        return crate::source::TYPESCRIPT_COMPONENT_SHA256;
    }
    Sha256::digest(component).into()
}

fn load(engine: &Engine, path: &Path) -> Option<Component> {
    let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
    mark_used(path, &meta);
    // SAFETY: the file is what `store` wrote for this key: the output of
    // `precompile_component` on an engine with the same compatibility hash
    // (part of the key), renamed into place whole. wasmtime checks that it is
    // an artifact of a compatible engine. The cache lives in the user's own
    // cache directory, created private; whoever can write there can already
    // run code as the user. Nothing in this process writes to the file while
    // it is mapped: a new artifact replaces it by a rename, which leaves the
    // mapped one as it was.
    match unsafe { Component::deserialize_file(engine, path) } {
        Ok(component) => Some(component),
        Err(_) => {
            let _ = std::fs::remove_file(path);
            None
        }
    }
}

/// Writes the artifact whole under a temporary name, syncs it and renames
/// it into place; then lets the page cache drop what the write left there.
/// Before that, [`tidy`]s the directory.
fn store(dir: &Path, path: &Path, compiled: &[u8]) -> std::io::Result<()> {
    tidy(dir);
    let mut file = tempfile::Builder::new().prefix(PARTIAL).tempfile_in(dir)?;
    file.write_all(compiled)?;
    file.as_file().sync_all()?;
    forget_written_pages(file.as_file());
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The end of an artifact's name.
const EXTENSION: &str = ".cwasm";

/// The start of a file being written (`<PARTIAL><random>`): what a writer
/// killed mid-write (SIGKILL, a power cut) leaves behind.
const PARTIAL: &str = ".partial-";

/// An artifact not loaded for this long is removed by the next store in
/// its directory: the compiled forms of components no longer used (each
/// release of the library, each build of a custom child) would otherwise
/// pile up for good, several MB each.
const UNUSED_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// How often a load marks its artifact as used: once a day at most, so
/// that a run does not write to the disk.
const MARK_EVERY: Duration = Duration::from_secs(24 * 3600);

/// The end of the name of an artifact's mark of use (`<key><USED>`, an
/// empty file): its modification time is when a load last marked the
/// artifact used. A file of its own, since setting the artifact's own time
/// means opening it for writing, which on an overlay filesystem (a
/// container whose image holds a warm cache) copies the whole artifact, megabytes, into
/// the container's layer, during the run.
const USED: &str = ".used";

/// A partial file this old is a leftover: a writer holds its file for one
/// write, one sync and one rename. Judged by age alone, since the writer
/// may be a process of another pid namespace sharing the directory.
const PARTIAL_STALE: Duration = Duration::from_secs(3600);

/// Marks the artifact at `path` as used now, if it was last marked (or
/// written) more than [`MARK_EVERY`] ago. Best effort.
fn mark_used(path: &Path, meta: &std::fs::Metadata) {
    if age(meta) <= MARK_EVERY {
        return;
    }
    let mark = used_mark(path);
    if std::fs::metadata(&mark).is_ok_and(|mark| age(&mark) <= MARK_EVERY) {
        return;
    }
    if let Ok(file) = std::fs::File::create(&mark) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// The path of the mark of use of the artifact at `path`.
fn used_mark(path: &Path) -> PathBuf {
    path.with_extension(&USED[1..])
}

/// How long ago the artifact at `path` (whose metadata is `meta`) was
/// last written or marked used.
fn unused_for(path: &Path, meta: &std::fs::Metadata) -> Duration {
    let written = age(meta);
    match std::fs::metadata(used_mark(path)) {
        Ok(mark) => written.min(age(&mark)),
        Err(_) => written,
    }
}

/// How long ago a file was last modified (zero for a time in the future).
fn age(meta: &std::fs::Metadata) -> Duration {
    meta.modified()
        .ok()
        .and_then(|modified| SystemTime::now().duration_since(modified).ok())
        .unwrap_or_default()
}

/// Removes from the cache directory `dir` what no process will use: the
/// artifacts not used for [`UNUSED_FOR`] with their marks of use, the marks
/// left without an artifact, and the partial files older than
/// [`PARTIAL_STALE`]. Only names of the forms this module writes: a
/// directory given as a Sandbox's cache may hold the user's own files. Run
/// before each store, that is when a process compiled something: rare, and
/// never on a warm start.
fn tidy(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // Not followed: a symlink is neither kind of file here.
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let path = entry.path();
        if name.starts_with(PARTIAL) {
            if age(&meta) > PARTIAL_STALE {
                let _ = std::fs::remove_file(&path);
            }
        } else if let Some(key) = name.strip_suffix(EXTENSION).filter(|key| is_key(key)) {
            if unused_for(&path, &meta) > UNUSED_FOR {
                let _ = std::fs::remove_file(&path);
                let _ = std::fs::remove_file(dir.join(format!("{key}{USED}")));
            }
        } else if let Some(key) = name.strip_suffix(USED).filter(|key| is_key(key))
            && !dir.join(format!("{key}{EXTENSION}")).exists()
        {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Whether `name` is a key: 64 lowercase hex digits.
fn is_key(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Asks the kernel to drop the (clean, synced) page-cache pages of `file`,
/// so that the processes that later map it read it back in pages of the
/// sizes their own faults ask for.
///
/// Linux 6.x keeps a written file in folios as large as the writes that made
/// them (up to 2 MiB here, ext4), and maps a whole folio around a fault
/// where it fits in the mapping. Left as written, the artifact cost every
/// later `wasmwire run` 2.1 MiB of its read-only sections where it reads
/// 0.2 MiB. Written in 64 KiB pieces instead, the CLI was fine but each
/// execution's copy-on-write mapping of the memory image held 0.09 MiB more
/// (0.73 against 0.64 MiB per execution, 500 at once). Read back through
/// readahead, both are at their smaller figure. Only advice: on error, or
/// elsewhere than Linux, nothing changes but those figures.
fn forget_written_pages(file: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: posix_fadvise only reads its arguments; the descriptor is
        // open for as long as `file` is borrowed.
        let _ = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Feeds a [`Hash`] value into a SHA-256.
struct DigestHasher<'a>(&'a mut Sha256);

impl Hasher for DigestHasher<'_> {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        // Only the digest is used; this is never called for a key.
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest component there is, `(component)`: the magic, version
    /// 0x0d and layer 1.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    fn engine() -> Engine {
        Engine::default()
    }

    /// Compiles the empty component into a fresh cache directory; returns
    /// the directory (kept alive), the engine and the cached file's path.
    fn compiled_into_a_cache() -> (tempfile::TempDir, Engine, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let engine = engine();
        load_or_compile(&engine, EMPTY_COMPONENT, Some(dir.path())).expect("compiles");
        let path = artifact(&engine, EMPTY_COMPONENT, b"as-is", dir.path());
        (dir, engine, path)
    }

    #[test]
    fn a_compiled_component_is_stored_and_loaded_back() {
        let (_dir, engine, path) = compiled_into_a_cache();
        assert!(path.exists());
        assert!(load(&engine, &path).is_some());
    }

    #[test]
    fn a_file_cut_short_or_not_an_artifact_is_recompiled_not_loaded() {
        let (dir, engine, path) = compiled_into_a_cache();
        let whole = std::fs::read(&path).expect("cached");
        for damaged in [&whole[..whole.len() / 2], &b"not an artifact"[..], &[][..]] {
            std::fs::write(&path, damaged).expect("writable");
            assert!(load(&engine, &path).is_none());
            assert!(!path.exists(), "the damaged file is removed");
            load_or_compile(&engine, EMPTY_COMPONENT, Some(dir.path())).expect("recompiles");
            assert_eq!(std::fs::read(&path).expect("stored again"), whole);
            assert!(load(&engine, &path).is_some());
        }
    }

    #[test]
    fn the_built_in_guest_is_keyed_by_the_digest_computed_at_build_time() {
        use crate::sandbox::{GUEST_COMPONENT, GUEST_COMPONENT_SHA256};
        let computed: [u8; 32] = Sha256::digest(GUEST_COMPONENT).into();
        assert_eq!(GUEST_COMPONENT_SHA256, computed);
        assert_eq!(component_digest(GUEST_COMPONENT), computed);
        let copy = GUEST_COMPONENT.to_vec();
        assert_eq!(component_digest(&copy), computed, "a copy is hashed now");
        assert_ne!(component_digest(EMPTY_COMPONENT), computed);
    }

    #[test]
    fn the_key_depends_on_the_engine_settings() {
        let bytes = EMPTY_COMPONENT;
        let mut config = wasmtime::Config::new();
        config.epoch_interruption(true);
        let other = Engine::new(&config).expect("engine");
        assert_ne!(
            key(&engine(), bytes, b"as-is"),
            key(&other, bytes, b"as-is")
        );
        assert_ne!(
            key(&engine(), bytes, b"as-is"),
            key(&engine(), bytes, b"other")
        );
    }

    #[test]
    fn an_unwritable_cache_still_compiles() {
        let bytes = EMPTY_COMPONENT;
        let dir = Path::new("/proc/wasmwire-cannot-be-here");
        load_or_compile(&engine(), bytes, Some(dir)).expect("compiles anyway");
    }

    #[test]
    fn a_directory_others_can_write_is_not_trusted() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
        let err = private_dir(dir.path()).unwrap_err();
        assert!(err.contains("only it can write"), "{err}");
        load_or_compile(&engine(), EMPTY_COMPONENT, Some(dir.path())).expect("compiles anyway");
        let files = std::fs::read_dir(dir.path()).expect("readable").count();
        assert_eq!(files, 0, "nothing is stored in (or loaded from) it");
    }

    /// Sets `path`'s modification time to `age` ago.
    fn set_age(path: &Path, age: Duration) {
        let file = std::fs::File::options()
            .append(true)
            .open(path)
            .expect("opens");
        file.set_modified(SystemTime::now() - age).expect("set");
    }

    #[test]
    fn a_store_removes_artifacts_unused_for_a_month_and_partial_files_left_an_hour() {
        let (dir, engine, fresh) = compiled_into_a_cache();
        let d = dir.path();
        let named = |c: char, end: &str| d.join(format!("{}{end}", c.to_string().repeat(64)));
        let old = named('a', EXTENSION);
        let old_mark = named('a', USED);
        let recent = named('b', EXTENSION);
        let old_but_used = named('c', EXTENSION);
        let its_mark = named('c', USED);
        let mark_alone = named('d', USED);
        let left = d.join(format!("{PARTIAL}x1y2z3"));
        let writing = d.join(format!("{PARTIAL}a1b2c3"));
        let users_own = d.join("plugin.cwasm");
        let users_notes = d.join(".tmp-notes");
        let users_temp = d.join(".tmpAb12Cd");
        let all = [
            &old,
            &old_mark,
            &recent,
            &old_but_used,
            &its_mark,
            &mark_alone,
            &left,
            &writing,
            &users_own,
            &users_notes,
            &users_temp,
        ];
        for path in all {
            std::fs::write(path, b"x").expect("writable");
            set_age(path, UNUSED_FOR * 2);
        }
        set_age(&recent, UNUSED_FOR - Duration::from_secs(3600));
        set_age(&its_mark, Duration::from_secs(3600));
        set_age(&writing, PARTIAL_STALE / 2);
        // A store: what a compilation does.
        std::fs::remove_file(&fresh).expect("removed");
        load_or_compile(&engine, EMPTY_COMPONENT, Some(d)).expect("compiles");
        assert!(fresh.exists(), "stored");
        let gone = [&old, &old_mark, &mark_alone, &left];
        for path in all {
            assert_eq!(
                path.exists(),
                !gone.contains(&path),
                "{} removed or kept",
                path.display()
            );
        }
        let names = std::fs::read_dir(d).expect("readable").count();
        assert_eq!(
            names,
            all.len() - gone.len() + 1,
            "no partial file of the store is left"
        );
    }

    #[test]
    fn a_load_marks_an_artifact_used_so_that_it_is_kept() {
        let (dir, engine, path) = compiled_into_a_cache();
        let mark = used_mark(&path);
        let modified = |path: &Path| {
            std::fs::metadata(path)
                .and_then(|m| m.modified())
                .expect("there")
        };
        set_age(&path, UNUSED_FOR + Duration::from_secs(3600));
        let written = modified(&path);
        assert!(load(&engine, &path).is_some());
        assert_eq!(written, modified(&path), "the artifact is not written to");
        let since = SystemTime::now()
            .duration_since(modified(&mark))
            .unwrap_or_default();
        assert!(since < MARK_EVERY, "marked used: {since:?} ago");
        tidy(dir.path());
        assert!(path.exists());
        // Marked at most once a day: a load the day it was marked writes nothing.
        set_age(&mark, Duration::from_secs(3600));
        let marked = modified(&mark);
        assert!(load(&engine, &path).is_some());
        assert_eq!(marked, modified(&mark));
        // Nor does one within a day of the artifact's writing.
        std::fs::remove_file(&mark).expect("removed");
        set_age(&path, Duration::from_secs(3600));
        assert!(load(&engine, &path).is_some());
        assert!(!mark.exists());
    }

    #[test]
    fn a_compiled_component_is_kept_in_a_directory_that_lacks_it() {
        let (_dir, engine, _path) = compiled_into_a_cache();
        let compiled = load_or_compile(&engine, EMPTY_COMPONENT, None).expect("compiles");
        let other = tempfile::tempdir().expect("temp dir");
        let path = artifact(&engine, EMPTY_COMPONENT, b"as-is", other.path());
        assert!(!path.exists());
        keep(&engine, EMPTY_COMPONENT, &compiled, other.path());
        assert!(load(&engine, &path).is_some(), "what was kept loads");
    }

    #[test]
    fn a_missing_directory_is_made_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = dir.path().join("a/b");
        private_dir(&cache).expect("made");
        let mode = std::fs::metadata(&cache)
            .expect("exists")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
