'use strict';
/**
 * serverless.yml's view of lib/settings.ts, the manifest of the stage settings, which it reads with
 * `${file(./infra/settings.cjs):…}`: `params` (each stage's block), `providerEnvironment` (what
 * every function gets) and `environment.<function>` (what a function reads). A setting is given as
 * `${param:<name>}`, another variable as its expression; the framework resolves both.
 * infra/function-env.ts resolves them as it does, for the tests and the local stack.
 */

// lib/settings.ts is TypeScript, which Node 24 loads itself (npm scripts and npx run the project's Node).
if (!process.features.typescript) {
  throw new Error(
    `infra/settings.cjs reads lib/settings.ts: run serverless with Node 24 (npx serverless), not ${process.version}`,
  );
}
const { ENVIRONMENT, FUNCTIONS, SETTINGS, STAGES } = require('../lib/settings.ts');

const settings = Object.entries(SETTINGS);
const variables = Object.entries(ENVIRONMENT);
const readers = (readBy) => (readBy ?? '').split(' ');

/** Each stage's block, and `default`: what a stage without a value of its own takes. */
const params = Object.fromEntries(
  ['default', ...STAGES].map((stage) => [
    stage,
    Object.fromEntries(
      settings.flatMap(([name, setting]) => (stage in setting.values ? [[name, setting.values[stage]]] : [])),
    ),
  ]),
);

/** A variable's value as serverless.yml writes it. */
const settingValue = (name) => `\${param:${name}}`;

/** What every function gets, whether it reads it or not. */
const providerEnvironment = Object.fromEntries([
  ...variables.flatMap(([variable, entry]) => (entry.everyFunction ? [[variable, entry.value]] : [])),
  ...settings.flatMap(([name, setting]) =>
    setting.readBy === 'every function' ? [[setting.variable, settingValue(name)]] : [],
  ),
]);

/** What each function reads, beyond providerEnvironment; Lambda sets a variable without a value itself. */
const environment = Object.fromEntries(
  FUNCTIONS.split(' ').map((fn) => [
    fn,
    Object.fromEntries([
      ...settings.flatMap(([name, setting]) =>
        setting.variable !== undefined && readers(setting.readBy).includes(fn)
          ? [[setting.variable, settingValue(name)]]
          : [],
      ),
      ...variables.flatMap(([variable, entry]) =>
        !entry.everyFunction && entry.value !== undefined && readers(entry.readBy).includes(fn)
          ? [[variable, entry.value]]
          : [],
      ),
    ]),
  ]),
);

module.exports = { params, providerEnvironment, environment };
