// What a file system error means for the library: the entry is gone (or was swapped for a
// symlink), the server may not read what is there (a fault to answer and report), or the
// process is short of descriptors or memory for a moment.

type Errno = NodeJS.ErrnoException;

/** The entry is not there (any more): the index follows the disk. */
export const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes((err as Errno).code ?? '');

/** Shortages of this process, not of the file: worth a retry, never a mark on the file. */
export const isTransient = (err: Errno) => ['EMFILE', 'ENFILE', 'ENOMEM', 'EAGAIN'].includes(err.code ?? '');

/**
 * The errno of a server-side read failure (EACCES, EPERM, EIO...): the entry is there and this
 * process cannot read it. Undefined for anything else: missing, a symlink met where a file was
 * opened without following links (ELOOP: it changed), or an error about the content.
 */
export function readFailure(err: unknown): Errno | undefined {
  const errno = err as Errno;
  return typeof errno?.code === 'string' && errno.syscall !== undefined && !isMissing(err) && errno.code !== 'ELOOP' ? errno : undefined;
}
