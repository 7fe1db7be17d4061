/**
 * The payload's data as the renderer reads it: base64 -> gunzip (the
 * browser's DecompressionStream) -> JSON, then each encoded column to its
 * typed array (little-endian, as numpy writes them on x86 and ARM).
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

export async function gunzipText(b64: string): Promise<string> {
  const stream = new Blob([base64Bytes(b64) as BlobPart])
    .stream()
    .pipeThrough(new DecompressionStream('gzip'));
  return await new Response(stream).text();
}

/** The report data of an encoded payload's `data` field. */
export async function decodeData(encoded: string): Promise<IReportData> {
  let text: string;
  try {
    text = await gunzipText(encoded);
  } catch (reason) {
    throw new Error(`the report's data could not be decompressed (${reason})`);
  }
  let raw: any;
  try {
    raw = JSON.parse(text);
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
