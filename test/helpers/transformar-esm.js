const { createHash } = require('node:crypto');
const ts = require('typescript');

/**
 * ES modules of node_modules (jose 6) turned into CommonJS for jest, with native class fields.
 * Not ts-jest: it keeps one configuration per jest project, so a second ts-jest transform gets
 * tsconfig.json's `useDefineForClassFields: false`, which breaks jose's error classes (their
 * constructors then touch `this` before `super`).
 */
const OPCOES = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, allowJs: true, inlineSourceMap: true };

module.exports = {
  process(fonte, arquivo) {
    return { code: ts.transpileModule(fonte, { fileName: arquivo, compilerOptions: OPCOES }).outputText };
  },
  getCacheKey(fonte, arquivo) {
    return createHash('sha256').update(`${ts.version}\0${arquivo}\0${fonte}`).digest('hex');
  },
};
