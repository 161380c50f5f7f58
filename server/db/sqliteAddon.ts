// better-sqlite3's native addon is compiled for one Node ABI. CI's second pass runs this same checkout on Node 24
// while the first Node's tests still run, so instead of swapping the file under node_modules it names the addon
// built for its Node in SWITCHBOARD_SQLITE_ADDON (scripts/otherNode.sh); unset, better-sqlite3 finds its own.
export function sqliteAddon(): { nativeBinding?: string } {
  const path = process.env.SWITCHBOARD_SQLITE_ADDON;
  return path ? { nativeBinding: path } : {};
}
