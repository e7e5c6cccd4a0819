/**
 * The evidence store (docs/evidence-and-privacy.md): a port with two adapters.
 * - S3EvidenceStore: the deployed store, an S3 bucket with Object Lock, SSE-KMS and versioning (lib/evidence-store.ts).
 *   Every object is written once: `IfNoneMatch: *` makes a retried write of the same record an answer ("already
 *   there"), never a second version; the retain-until date is set on the object itself, with the mode the stack
 *   chose; a SHA-256 checksum travels with the bytes (Object Lock refuses a put without one, and S3 verifies it).
 * - FileEvidenceStore: the local run's store, a folder (each run's own: .local/runs/<run>/evidence): the same keys,
 *   the same bytes, written once.
 * Nothing here re-encodes a record: the bytes put are the bytes a later get returns. Readers see versions
 * (`history`): a record superseded by a later version of its key, or hidden behind a delete marker, is still found
 * — its first version is the one written — and its history says so (the bucket policy denies both; this shows it if
 * it ever happened anyway: evidence-versions.ts).
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import {
  GetObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  type ObjectLockMode,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { EvidenceConfig } from '../commons/config.ts';
import type { EvidenceLockMode } from '../domain/evidence.ts';

/** The store the configuration names (an S3 client is created only for the bucket), or undefined: none kept. */
export function evidenceStoreOf(config: EvidenceConfig['store'], s3: () => S3Client): EvidenceStore | undefined {
  if (config === undefined) return undefined;
  return config.kind === 's3'
    ? new S3EvidenceStore(s3(), config.bucket, config.lockMode)
    : new FileEvidenceStore(config.dir);
}

export type EvidencePut = 'written' | 'alreadyThere';

/** One key of the store as versions tell it: a record is written once, so more than one version is a sign of tampering. */
export interface EvidenceObjectHistory {
  readonly key: string;
  /** Every version of the key that holds bytes, oldest first; the first is the one written. */
  readonly versions: readonly { readonly versionId: string | undefined; readonly at: string | undefined }[];
  /** The current version is a delete marker: a plain read of the key finds nothing. */
  readonly hidden: boolean;
}

export interface EvidenceStore {
  /**
   * Writes the object once; the same key again answers `alreadyThere` and changes nothing. Without a retain-until
   * date the bucket's default retention applies.
   */
  put(key: string, body: Uint8Array, retainUntil: Date | undefined, signal?: AbortSignal): Promise<EvidencePut>;
  /** Every key under a prefix that a plain read finds (current versions), in key order. */
  list(prefix: string): Promise<string[]>;
  /** The object's bytes: its current version, or the version named. */
  get(key: string, versionId?: string): Promise<Uint8Array | undefined>;
  /** Every key ever written under a prefix, in key order, with its versions and whether a delete marker hides it. */
  history(prefix: string): Promise<EvidenceObjectHistory[]>;
}

export class S3EvidenceStore implements EvidenceStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly lockMode: EvidenceLockMode,
  ) {}

  async put(key: string, body: Uint8Array, retainUntil: Date | undefined, signal?: AbortSignal): Promise<EvidencePut> {
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ContentType: 'application/json; charset=utf-8',
          ChecksumAlgorithm: 'SHA256',
          ChecksumSHA256: createHash('sha256').update(body).digest('base64'),
          IfNoneMatch: '*',
          ...(retainUntil === undefined
            ? {}
            : { ObjectLockMode: this.lockMode as ObjectLockMode, ObjectLockRetainUntilDate: retainUntil }),
          // The bucket's default encryption is SSE-KMS with its key; saying so makes a bucket changed under us fail
          // loudly instead of storing evidence unencrypted.
          ServerSideEncryption: 'aws:kms',
          BucketKeyEnabled: true,
        }),
        signal === undefined ? {} : { abortSignal: signal },
      );
      return 'written';
    } catch (error) {
      // 412: the key exists (a retry of a write whose reply was lost, or the sweeper filling a gap already filled).
      if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 412) {
        return 'alreadyThere';
      }
      throw error;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return keys.sort();
  }

  async history(prefix: string): Promise<EvidenceObjectHistory[]> {
    const byKey = new Map<
      string,
      { versions: { versionId: string | undefined; at: string | undefined; ms: number }[]; hidden: boolean }
    >();
    const of = (key: string) => {
      const entry = byKey.get(key) ?? { versions: [], hidden: false };
      byKey.set(key, entry);
      return entry;
    };
    let keyMarker: string | undefined;
    let versionIdMarker: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectVersionsCommand({
          Bucket: this.bucket,
          Prefix: prefix,
          KeyMarker: keyMarker,
          VersionIdMarker: versionIdMarker,
        }),
      );
      for (const v of page.Versions ?? []) {
        if (v.Key === undefined) continue;
        of(v.Key).versions.push({
          versionId: v.VersionId,
          at: v.LastModified?.toISOString(),
          ms: v.LastModified?.getTime() ?? 0,
        });
      }
      for (const m of page.DeleteMarkers ?? []) if (m.Key !== undefined && m.IsLatest === true) of(m.Key).hidden = true;
      const more = page.IsTruncated === true;
      keyMarker = more ? page.NextKeyMarker : undefined;
      versionIdMarker = more ? page.NextVersionIdMarker : undefined;
    } while (keyMarker !== undefined);
    return [...byKey.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, e]) => ({
        key,
        versions: e.versions.sort((a, b) => a.ms - b.ms).map(({ versionId, at }) => ({ versionId, at })),
        hidden: e.hidden,
      }));
  }

  async get(key: string, versionId?: string): Promise<Uint8Array | undefined> {
    try {
      const r = await this.s3.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(versionId === undefined ? {} : { VersionId: versionId }),
        }),
      );
      return r.Body === undefined ? undefined : await r.Body.transformToByteArray();
    } catch (error) {
      if ((error as Error).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }
}

/**
 * The local run's evidence store: one file per key under a folder. Written once (the `wx` flag: an existing file is
 * `alreadyThere`, as S3's If-None-Match); the retain-until date has no enforcement on a laptop and is kept in the
 * record itself.
 */
export class FileEvidenceStore implements EvidenceStore {
  constructor(private readonly root: string) {}

  private path(key: string): string {
    // Keys are ours (domain/evidence.ts percent-encodes every id); refuse anything that would leave the folder.
    if (key.split('/').some((p) => p === '..' || p === '.' || p === '')) throw new Error(`bad evidence key ${key}`);
    return join(this.root, ...key.split('/'));
  }

  async put(key: string, body: Uint8Array, _retainUntil?: Date): Promise<EvidencePut> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    let file: Awaited<ReturnType<typeof open>>;
    try {
      file = await open(path, 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'alreadyThere';
      throw error;
    }
    try {
      await file.writeFile(body);
    } finally {
      await file.close();
    }
    return 'written';
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
      for (const e of entries) {
        const path = join(dir, e.name);
        if (e.isDirectory()) await walk(path);
        else keys.push(relative(this.root, path).split(sep).join('/'));
      }
    };
    // Walk from the deepest folder the prefix names, then filter by the whole prefix.
    const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    await walk(folder === '' ? this.root : join(this.root, ...folder.split('/')));
    return keys.filter((k) => k.startsWith(prefix)).sort();
  }

  /** A folder keeps one version per key and no delete markers: each key as it is. */
  async history(prefix: string): Promise<EvidenceObjectHistory[]> {
    return (await this.list(prefix)).map((key) => ({
      key,
      versions: [{ versionId: undefined, at: undefined }],
      hidden: false,
    }));
  }

  async get(key: string, _versionId?: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.path(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }
}
