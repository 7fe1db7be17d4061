/**
 * The payload's data as the renderer reads it: base64 -> gunzip (the
 * browser's DecompressionStream) -> the binary container of
 * render/views/__init__.py `pack_data`: "JPR\x02", a uint32 (LE) header
 * length, the header (the data as UTF-8 JSON; `tasks` {name: {dtype, n, o, s}})
 * and each array's bytes at 8-aligned offsets (byte-shuffled when `s`), read
 * into typed arrays (little-endian, as numpy writes them on x86 and ARM).
 * The older JSON form (arrays as base64 inside) is still read.
 */
import { IEncodedArray, IReportData, NumberArray } from './types';

const ARRAYS: Record<IEncodedArray['dtype'], any> = {
  float64: Float64Array,
  float32: Float32Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int8: Int8Array,
  uint8: Uint8Array
};

export function base64Bytes(b64: string): Uint8Array {
  const binary = atob(b64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}

export function decodeArray(col: IEncodedArray): NumberArray {
  const Ctor = ARRAYS[col.dtype];
  if (!Ctor) {
    throw new Error(`unknown array type ${JSON.stringify(col.dtype)}`);
  }
  const bytes = base64Bytes(col.b64);
  // a copy: a typed array needs its element size's alignment
  const buffer = bytes.buffer.slice(
    bytes.byteOffset,
    bytes.byteOffset + bytes.byteLength
  );
  return new Ctor(buffer);
}

/**
 * render/views/__init__.py `b85`: "b85:", the count of zero bytes padded at
 * the end, then 5 characters per 4 bytes (big-endian base 85).
 */
export const B85_PREFIX = 'b85:';
const B85_ALPHABET = Array.from({ length: 0x7f - 0x21 }, (_, i) =>
  String.fromCharCode(0x21 + i)
)
  .filter(c => !'"&\'<>\\`'.includes(c))
  .slice(0, 85)
  .join('');

export function base85Bytes(text: string): Uint8Array {
  const lookup = new Uint8Array(128);
  for (let k = 0; k < 85; k++) {
    lookup[B85_ALPHABET.charCodeAt(k)] = k;
  }
  const pad = Number(text.charAt(B85_PREFIX.length));
  const start = B85_PREFIX.length + 1;
  const groups = Math.floor((text.length - start) / 5);
  const out = new Uint8Array(groups * 4);
  for (let g = 0, p = start, o = 0; g < groups; g++, p += 5, o += 4) {
    const v =
      (((lookup[text.charCodeAt(p)] * 85 + lookup[text.charCodeAt(p + 1)]) *
        85 +
        lookup[text.charCodeAt(p + 2)]) *
        85 +
        lookup[text.charCodeAt(p + 3)]) *
        85 +
      lookup[text.charCodeAt(p + 4)];
    out[o] = v >>> 24;
    out[o + 1] = (v >>> 16) & 0xff;
    out[o + 2] = (v >>> 8) & 0xff;
    out[o + 3] = v & 0xff;
  }
  return pad ? out.subarray(0, out.length - pad) : out;
}

/** The bytes of a payload's `data` text: base 85 ("b85:…") or base64. */
export function textBytes(encoded: string): Uint8Array {
  return encoded.startsWith(B85_PREFIX)
    ? base85Bytes(encoded)
    : base64Bytes(encoded);
}

export async function gunzipBytes(b64: string): Promise<Uint8Array> {
  const stream = new Blob([textBytes(b64) as BlobPart])
    .stream()
    .pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export async function gunzipText(b64: string): Promise<string> {
  return new TextDecoder().decode(await gunzipBytes(b64));
}

const MAGIC = [0x4a, 0x50, 0x52, 0x02]; // "JPR\x02"

function isContainer(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && MAGIC.every((b, i) => bytes[i] === b);
}

/** One array of the container: a view on its bytes, or un-shuffled into a new array. */
function containerArray(
  bytes: Uint8Array,
  at: number,
  head: { dtype: IEncodedArray['dtype']; n: number; s: number; d?: string }
): NumberArray {
  if (head.d) {
    // sent as its differences (int8/16/32): the running sum, exact, in the array's own type
    const steps = containerArray(bytes, at, {
      ...head,
      dtype: head.d as IEncodedArray['dtype'],
      d: undefined
    });
    const Final = ARRAYS[head.dtype];
    if (!Final) {
      throw new Error(`unknown array type ${JSON.stringify(head.dtype)}`);
    }
    const out = new Final(head.n);
    let t = 0;
    for (let i = 0; i < head.n; i++) {
      t += steps[i];
      out[i] = t;
    }
    return out;
  }
  const Ctor = ARRAYS[head.dtype];
  if (!Ctor) {
    throw new Error(`unknown array type ${JSON.stringify(head.dtype)}`);
  }
  const w: number = Ctor.BYTES_PER_ELEMENT,
    n = head.n;
  if (!head.s) {
    const abs = bytes.byteOffset + at;
    if (abs % w === 0) {
      return new Ctor(bytes.buffer, abs, n);
    }
    return new Ctor(bytes.buffer.slice(abs, abs + n * w));
  }
  // un-shuffle: byte b of element i is at at + b * n + i. Whole words are written
  // (little-endian, as everywhere in this module), a few times faster than bytes.
  const src = bytes.subarray(at, at + n * w);
  const out = new Uint8Array(n * w);
  if (w === 2) {
    const o16 = new Uint16Array(out.buffer);
    for (let i = 0; i < n; i++) {
      o16[i] = src[i] | (src[n + i] << 8);
    }
  } else if (w === 4 || w === 8) {
    const o32 = new Uint32Array(out.buffer),
      words = w / 4;
    for (let q = 0; q < words; q++) {
      const b0 = 4 * q * n;
      for (let i = 0, j = q; i < n; i++, j += words) {
        o32[j] =
          (src[b0 + i] |
            (src[b0 + n + i] << 8) |
            (src[b0 + 2 * n + i] << 16) |
            (src[b0 + 3 * n + i] << 24)) >>>
          0;
      }
    }
  } else {
    for (let b = 0; b < w; b++) {
      for (let i = 0, j = b; i < n; i++, j += w) {
        out[j] = src[b * n + i];
      }
    }
  }
  return new Ctor(out.buffer);
}

/** Report data of the binary container (see the module comment). */
export function fromContainer(bytes: Uint8Array): IReportData {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = view.getUint32(4, true);
  let raw: any;
  try {
    raw = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + size)));
  } catch {
    throw new Error("the report's data header is not JSON");
  }
  const body = 8 + size;
  const tasks: Record<string, NumberArray> = {};
  for (const [name, head] of Object.entries<any>(raw.tasks ?? {})) {
    tasks[name] = containerArray(bytes, body + head.o, head);
  }
  raw.tasks = {};
  const data = fromJson(raw);
  data.tasks = tasks;
  return data;
}

/** The report data of an encoded payload's `data` field. */
export async function decodeData(encoded: string): Promise<IReportData> {
  let bytes: Uint8Array;
  try {
    bytes = await gunzipBytes(encoded);
  } catch (reason) {
    throw new Error(`the report's data could not be decompressed (${reason})`);
  }
  if (isContainer(bytes)) {
    return fromContainer(bytes);
  }
  let raw: any;
  try {
    raw = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new Error("the report's data is not JSON");
  }
  return fromJson(raw);
}

/** Decode the encoded columns of parsed report data (in place) and return it. */
export function fromJson(raw: any): IReportData {
  if (typeof raw !== 'object' || raw === null || !raw.header) {
    throw new Error('the report data has no header');
  }
  const tasks: Record<string, NumberArray> = {};
  for (const [name, col] of Object.entries(raw.tasks ?? {})) {
    tasks[name] = decodeArray(col as IEncodedArray);
  }
  raw.tasks = tasks;
  raw.tabs = raw.tabs ?? {};
  raw.tasks_meta = raw.tasks_meta ?? {};
  return raw as IReportData;
}
