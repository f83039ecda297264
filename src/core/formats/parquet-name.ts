/** True when the name says Parquet (`.parquet`, `.pq`). Apart from the reader, so that asking loads no Parquet code. */
export function isParquetName(name: string): boolean {
  return /\.(parquet|pq)$/i.test(name);
}
