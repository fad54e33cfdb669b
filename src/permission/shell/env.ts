/** Assignments that only change output or locale, never which program runs or what it loads. */
const HARMLESS_ENV = new Set(
  "CI NODE_ENV DEBUG FORCE_COLOR NO_COLOR TERM TZ LANG LANGUAGE COLUMNS LINES RUST_BACKTRACE RUST_LOG PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE VERBOSE NODE_NO_WARNINGS".split(
    " "
  )
)
export const isHarmlessEnv = (name: string) => HARMLESS_ENV.has(name) || /^LC_[A-Z_]+$/.test(name)
