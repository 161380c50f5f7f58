// node-polyglot requires the `object.entries` polyfill, which brings a dozen
// es-abstract helper packages (8 KiB on the login page); every browser the
// console supports has Object.entries itself.
module.exports = Object.entries;
