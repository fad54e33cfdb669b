/**
 * Credential and history files: where a person's keys, tokens and typed commands live. Reading
 * one asks (read, grep, glob's contents), and inside the sandbox they are not there at all. Two
 * parts, both here so the sandbox and the permission engine share them: the secret-name rule
 * (any folder) and the list of places below the home folder. `permissions.credentialFiles` adds
 * to them (docs/permissions.md).
 */
import * as NodePath from "node:path"

/**
 * Below the home directory: a folder hides everything in it, a file itself. By tool: SSH, GnuPG
 * and pass; the clouds (AWS with its SSO and CLI caches, Google Cloud, Azure, Oracle, IBM,
 * DigitalOcean, Fly, Heroku, Vercel, Netlify); containers and clusters (Docker, Podman's auth,
 * Kubernetes, Helm's repositories); package registries (npm, Yarn, pnpm via .npmrc, PyPI, gem,
 * cargo, Composer, NuGet, Maven, Gradle, Hex); git forges (gh, glab, git's credential stores,
 * hub, tea); infrastructure tools (Terraform, Vault, Pulumi); databases (.pgpass, MySQL's
 * option files and login path); coding agents (Claude, Codex, Gemini, Copilot, Cursor, Aider);
 * secret managers (1Password's CLI, Bitwarden's); storage and data tools (rclone, s3cmd, boto,
 * Databricks, Snowflake), Cloudflare's wrangler, the configstore of npm CLIs (Firebase), Sentry,
 * CircleCI, Stripe, Supabase, Hetzner, Linode; Hugging Face, ngrok, the keyrings; and shell and
 * REPL histories (atuin's too).
 */
export const HOME_CREDENTIALS: ReadonlyArray<string> = [
  ".ssh",
  ".gnupg",
  ".password-store",
  ".local/share/keyrings",
  ".aws/credentials",
  ".aws/config",
  ".aws/sso/cache",
  ".aws/cli/cache",
  ".config/gcloud",
  ".azure",
  ".oci",
  ".bluemix",
  ".config/doctl",
  ".fly",
  ".netrc",
  ".config/heroku",
  ".local/share/com.vercel.cli",
  ".config/netlify",
  ".docker/config.json",
  ".config/containers/auth.json",
  ".kube",
  ".config/helm/repositories.yaml",
  ".npmrc",
  ".yarnrc.yml",
  ".config/yarn",
  ".pypirc",
  ".config/pypoetry/auth.toml",
  ".gem/credentials",
  ".local/share/gem/credentials",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".config/composer/auth.json",
  ".composer/auth.json",
  ".nuget/NuGet/NuGet.Config",
  ".m2/settings.xml",
  ".m2/settings-security.xml",
  ".gradle/gradle.properties",
  ".hex/hex.config",
  ".config/gh/hosts.yml",
  ".config/glab-cli",
  ".config/hub",
  ".config/tea",
  ".git-credentials",
  ".config/git/credentials",
  ".terraform.d/credentials.tfrc.json",
  ".terraformrc",
  ".vault-token",
  ".pulumi/credentials.json",
  ".pgpass",
  ".my.cnf",
  ".mylogin.cnf",
  ".claude/.credentials.json",
  ".claude.json",
  ".config/claude",
  ".codex/auth.json",
  ".gemini/oauth_creds.json",
  ".config/github-copilot",
  ".cursor/mcp.json",
  ".aider.conf.yml",
  ".config/op",
  ".op",
  ".config/Bitwarden CLI",
  ".cache/huggingface/token",
  ".huggingface/token",
  ".config/ngrok",
  ".config/rclone",
  ".s3cfg",
  ".boto",
  ".databrickscfg",
  ".snowflake",
  ".wrangler",
  ".config/.wrangler",
  ".config/configstore",
  ".sentryclirc",
  ".circleci/cli.yml",
  ".config/stripe",
  ".supabase/access-token",
  ".config/hcloud",
  ".config/linode-cli",
  ".yarnrc",
  ".bash_history",
  ".zsh_history",
  ".sh_history",
  ".history",
  ".python_history",
  ".node_repl_history",
  ".psql_history",
  ".mysql_history",
  ".sqlite_history",
  ".lesshst",
  ".local/share/fish/fish_history",
  ".rediscli_history",
  ".irb_history",
  ".local/share/nvim/shada",
  ".local/share/atuin",
  ".bash_sessions",
  ".zsh_sessions"
]

/** The concrete paths below `home` the sandbox hides, `extra` (absolute) included. */
export const credentialPaths = (home: string, extra: ReadonlyArray<string> = []): ReadonlyArray<string> => [
  ...HOME_CREDENTIALS.map((p) => NodePath.join(home, p)),
  ...extra
]

/** macOS and Windows compare names without case by default: `~/.SSH` is `~/.ssh` there. */
const FOLDED = process.platform === "darwin" || process.platform === "win32"

/** True when `abs` is one of the credential paths below `home`, or inside one of its folders. */
export const isCredentialPath = (abs: string, home: string, extra: ReadonlyArray<string> = []): boolean => {
  const path = FOLDED ? abs.toLowerCase() : abs
  const base = FOLDED ? home.toLowerCase() : home
  // Most paths a call touches are not below the home directory's dot-folders: one test decides.
  if (
    extra.length === 0 &&
    !(path.startsWith(base) && path.charCodeAt(base.length) === 47 && path.charCodeAt(base.length + 1) === 46)
  )
    return false
  for (const c of credentialPaths(home, extra)) {
    const p = FOLDED ? c.toLowerCase() : c
    if (path === p || path.startsWith(`${p}/`)) return true
  }
  return false
}

/**
 * Secret file names, whatever folder they are in, without case (`.ENV` is `.env` on a
 * case-insensitive disk, and the other spelling is no one's source file): `.env` and `.env.*`
 * and `.env_*`, `.env-*` (not `.env.example`, `.sample`, `.template`, `.dist`), `.envrc`
 * (direnv's, which exports tokens),
 * `.dev.vars` (Cloudflare's), `*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.jks`, `*.keystore`,
 * `*.kdbx`, `*.ppk`, SSH private keys (`id_rsa`, `id_dsa`, `id_ecdsa`, `id_ed25519`, and their
 * `_sk` forms), `.netrc`, `.npmrc`, `.pypirc`, `.pgpass`, `.my.cnf`, `.s3cfg`, `.vault-token`,
 * `.htpasswd`, `.git-credentials`, `secrets.json`/`.yaml`/`.yml`/`.toml`, `credentials.json`,
 * `client_secret*.json` and `service-account*.json` (Google's). Tested on the last name of a
 * path only.
 */
const SECRET_NAME =
  /^(?:\.env|\.env[._-](?!(?:example|sample|template|dist)$)[^/]+|\.envrc|\.dev\.vars|id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?|\.netrc|\.npmrc|\.pypirc|\.pgpass|\.my\.cnf|\.s3cfg|\.vault-token|\.htpasswd|\.git-credentials|secrets?\.(?:json|ya?ml|toml)|credentials\.json|client_secrets?[^/]*\.json|service[-_]account[^/]*\.json|[^/]*\.(?:pem|key|p12|pfx|jks|keystore|kdbx|ppk))$/i

const DOT = 46
const LAST = new Set([..."my2xnlsek"].map((c) => c.charCodeAt(0)))
const LOWER_I = 105
const UPPER_I = 73

/** True when the file name `name` (no folder) is a secret's. */
export const isSecretName = (name: string): boolean => {
  // Most names can be told apart by their first character or their last, without the expression.
  const first = name.charCodeAt(0)
  const last = name.charCodeAt(name.length - 1) | 32
  // The last characters of the patterns: m y 2 x (pem key p12 pfx kdbx), n (json), l (yaml
  // toml), s (jks), e (keystore), k (ppk).
  return (first === DOT || first === LOWER_I || first === UPPER_I || LAST.has(last)) && SECRET_NAME.test(name)
}

/** True when the last name of the path `abs` is a secret's (isSecretName). */
export const hasSecretName = (abs: string): boolean => isSecretName(abs.slice(abs.lastIndexOf("/") + 1))
