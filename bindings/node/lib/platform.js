'use strict';
// The native module's file name for this platform, as napi-rs names them
// (`sluicegate.linux-x64-gnu.node`): the build writes it, the loader reads it.

function abi() {
  if (process.platform === 'linux') {
    const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
    return report && !report.header?.glibcVersionRuntime ? '-musl' : '-gnu';
  }
  if (process.platform === 'win32') return '-msvc';
  return '';
}

function binaryName() {
  return `sluicegate.${process.platform}-${process.arch}${abi()}.node`;
}

module.exports = { binaryName };
