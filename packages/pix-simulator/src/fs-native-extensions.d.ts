// The part of fs-native-extensions (no bundled types) that lock.ts uses.
declare module 'fs-native-extensions' {
  /** Takes an exclusive (or shared) lock on the file without waiting; false when someone else holds it. */
  export function tryLock(fd: number, offset?: number, length?: number, opts?: { shared?: boolean }): boolean;
  export function unlock(fd: number, offset?: number, length?: number): void;
}
