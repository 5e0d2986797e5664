import { describe, expect, it } from 'vitest';
import { fillArgv, nulArgument, optionLikeArgument } from '../../src/tools/command.js';

// A placeholder named as an Object.prototype member reads the model's argument, never the
// inherited function (which JSON.stringify makes undefined, and the option check threw on).
describe('a command tool placeholder named as an inherited member', () => {
  const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf'];
  it.each(names)('{%s} absent is left out, and refuses nothing', (name) => {
    const template = ['echo', 'hello', `{${name}}`, `x{${name}}y`, `-{${name}}`];
    expect(fillArgv(template, {})).toEqual(['echo', 'hello', 'xy', '-']);
    expect(optionLikeArgument(template, {})).toBeNull();
    expect(nulArgument(template, {})).toBeNull();
  });

  it.each(names.filter((name) => name !== '__proto__'))('{%s} given is the model\'s value', (name) => {
    const template = ['echo', `{${name}}`, `x{${name}}`];
    expect(fillArgv(template, { [name]: 'bob' })).toEqual(['echo', 'bob', 'xbob']);
    expect(optionLikeArgument(template, { [name]: '-p' })).toContain(`"${name}" starts with "-"`);
    expect(nulArgument(template, { [name]: 'a\u0000b' })).not.toBeNull();
  });

  it('{__proto__} sent by the model (an own property, as JSON.parse makes it) is its value', () => {
    const args = JSON.parse('{"__proto__": "bob"}') as Record<string, unknown>;
    expect(fillArgv(['echo', '{__proto__}'], args)).toEqual(['echo', 'bob']);
  });
});
