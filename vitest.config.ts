import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { defineConfig } from "vitest/config"

// Tests (and the processes they start) never read the person's own config or trusted folders,
// nor write state under their home: both XDG folders point into a fresh temporary folder.
const home = mkdtempSync(join(tmpdir(), "freecode-test-xdg-"))

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["./test/state-dir.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    env: { XDG_CONFIG_HOME: join(home, "config"), XDG_STATE_HOME: join(home, "state") },
    reporters: ["default", "./test/summary-reporter.ts"]
  }
})
