/**
 * The session database's schema, as an append-only list: migration N brings a database from
 * `user_version` N-1 to N. Never edit a shipped entry; add a new one.
 */
export const migrations: ReadonlyArray<string> = [
  // 1: the output store. `used` values come from one clock, so LRU order holds across processes.
  // Byte totals are kept as counters (per session, and for spilled files in meta), so a put
  // never sums rows; `text` is the last column, so reading a row's sizes never reads its text.
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
   INSERT INTO meta (key, value) VALUES ('clock', 0), ('disk_bytes', 0);
   CREATE TABLE output_sessions (id TEXT PRIMARY KEY, used INTEGER NOT NULL, bytes INTEGER NOT NULL DEFAULT 0);
   CREATE INDEX output_sessions_used ON output_sessions (used);
   CREATE TABLE outputs (
     session_id TEXT NOT NULL,
     id TEXT NOT NULL,
     tool TEXT NOT NULL,
     chars INTEGER NOT NULL,
     lines INTEGER NOT NULL,
     bytes INTEGER NOT NULL,
     file TEXT,
     dropped_bytes INTEGER,
     used INTEGER NOT NULL,
     head TEXT,
     tail TEXT,
     text TEXT NOT NULL,
     PRIMARY KEY (session_id, id)
   );
   CREATE INDEX outputs_session_used ON outputs (session_id, used) WHERE file IS NULL;
   CREATE INDEX outputs_file_used ON outputs (used) WHERE file IS NOT NULL;`,
  // 2: todo lists, one per session, replaced whole by todowrite.
  `CREATE TABLE todos (session_id TEXT PRIMARY KEY, todos TEXT NOT NULL, updated_at INTEGER NOT NULL);`,
  // 3: "always" approvals, one row per normalized subject a person approved in a session.
  `CREATE TABLE grants (
     session_id TEXT NOT NULL,
     grant_key TEXT NOT NULL,
     display TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (session_id, grant_key)
   );`,
  // 4: background jobs, one row per job a session started: what a resumed session (another
  // process) reports as ended. `host_pid`/`host_token` name the tool system that ran the job.
  `CREATE TABLE jobs (
     session_id TEXT NOT NULL,
     id TEXT NOT NULL,
     command TEXT NOT NULL,
     started_at INTEGER NOT NULL,
     host_pid INTEGER NOT NULL,
     host_token TEXT NOT NULL,
     state TEXT NOT NULL,
     bytes INTEGER NOT NULL,
     PRIMARY KEY (session_id, id)
   );`
]
