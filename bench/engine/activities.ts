export async function touch(n: number): Promise<number> {
  return n + 1;
}
