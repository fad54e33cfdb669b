import { describe, expect, it } from "@effect/vitest"
import { isSensitive } from "../../src/permission/containment.ts"

describe("isSensitive", () => {
  it("names secrets by file name, in any directory", () => {
    const secret = [".env", ".env.local", ".env.production", "server.pem", "tls.key", "id_rsa", "id_dsa"]
    const alsoSecret = ["id_ecdsa", "id_ed25519", ".netrc", ".npmrc", ".pypirc", ".env.example.bak"]
    // Without case, and the names the rule grew: direnv's file, key stores, SSH security keys.
    const spelled = [".ENV", ".Env.local", ".env.PRODUCTION", "Server.PEM", "TLS.Key", "ID_RSA", ".envrc", ".ENVRC"]
    const more = ["store.p12", "cert.pfx", "id_ed25519_sk", ".pgpass", ".git-credentials"]
    for (const name of [...secret, ...alsoSecret, ...spelled, ...more]) {
      expect(isSensitive(`/p/${name}`), name).toBe(true)
      expect(isSensitive(`/p/deep/dir/${name}`), name).toBe(true)
    }
    const plain = [".env.example", ".ENV.EXAMPLE", ".env.sample", ".env.template", ".env.dist", "env", "my.env"]
    const alsoPlain = [
      "id_rsa.pub",
      "key.ts",
      "pem.txt",
      "keys",
      "npmrc",
      ".gitignore",
      "id_rsa_backup",
      ".envrc.sample"
    ]
    for (const name of [...plain, ...alsoPlain]) expect(isSensitive(`/p/${name}`), name).toBe(false)
    // The directory never counts, only the name.
    expect(isSensitive("/home/.env/readme.md")).toBe(false)
    expect(isSensitive("/keys.pem/notes.txt")).toBe(false)
  })
})
