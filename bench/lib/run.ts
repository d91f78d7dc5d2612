/** A bench's entry point: exit 0 when it finished, 1 with the error when it did not (open handles must not keep it alive). */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
