// A node:test reporter for test/support/node_test_peer.js: one JSON line per top-level test,
// [file, name, 'passed' | 'failed' | 'skipped', the first lines of its failure].
export default async function* reporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, name, file, skip, details } = event.data;
    if (nesting !== 0 || !file) continue;
    const error = details?.error;
    const message = error ? String(error.cause?.stack ?? error.cause ?? error.stack ?? error).split('\n').slice(0, 8).join('\n') : '';
    yield `${JSON.stringify([file, name, skip ? 'skipped' : event.type === 'test:pass' ? 'passed' : 'failed', message])}\n`;
  }
}
