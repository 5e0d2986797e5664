import { relative } from 'node:path';
import type { Command } from 'commander';
import { MIN_TOOL_BUDGET } from '../config/settings.js';
import type { FlagOverrides } from '../config/settings.js';
import { ArgoError, RuntimeError } from '../errors.js';
import { errnoOf } from '../log/fs.js';
import { CLI_HINTS, howToGetModel, installedNames, orInstalledModel } from '../ollama/fix-hints.js';
import { fullModelName } from '../ollama/model-name.js';
import { OllamaTransport, questionFailure } from '../ollama/transport.js';
import { FEATURES, hasFeature, parseVersion, versionText } from '../ollama/versions.js';
import type { OllamaFeature, OllamaVersion } from '../ollama/versions.js';
import { jsonTextFor, untrustedTextFor } from '../output/terminal-text.js';
import type { OutputFlags } from './output-flags.js';
import { settingsFor } from './settings.js';
import type { Io } from './io.js';
import { oneShotFetch } from './one-shot-fetch.js';
import type { Outcome } from './outcome.js';
import { DOCTOR_OPTIONS } from './doctor-options.js';
import { plural } from '../output/count.js';
import { groupThousands } from '../text/decimal.js';
import { hostNamed, unfinishedDir } from '../log/unfinished.js';
import { FOLDER_FIX, LISTED_PROBLEMS, recoverUnfinished, rescuedDir, rescuedFiles } from '../turn/recover.js';
import { chatHistoryFile, recallableHistory } from '../chat/history.js';
import type { Recovery } from '../turn/recover.js';
import type { Settings } from '../config/settings.js';
import { checkToolNames } from './agent.js';
import { usesTools } from './ask-flags.js';
import { checkDataHome } from '../turn/data-home.js';
import type { DataHomeCheck, DataHomeProblem } from '../turn/data-home.js';
import { fileFix, fileProblem } from './file-failure.js';

export interface DoctorCheck {
  check: string;
  ok: boolean;
  detail: string;
  /** Passed, with something worth knowing: an Ollama too old for some of what Argo offers. */
  warning?: true;
  /** Every file the check found a problem with (the unfinished check's files that cannot be logged). */
  files?: FileProblem[];
}

export interface FileProblem {
  file: string;
  problem: string;
}

type Verdict = 'ok' | 'warn' | 'fail';
const LABELS: Record<Verdict, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };
const CHECK_WIDTH = 10;
/** Where a check's detail starts on its line: a file it names goes below, in line with it. */
const FILE_INDENT = ' '.repeat(LABELS.ok.length + 2 + CHECK_WIDTH + 1);

/**
 * A check's lines on the text report: the check, then, when it names several files, one line per
 * file, at most LISTED_PROBLEMS of them and a line saying how to see the rest. `shown` makes text
 * from outside (the server's words, file names and what was wrong in them) safe for the output.
 */
export function reportLines(check: DoctorCheck, shown: (text: string) => string = (text) => text): string[] {
  const verdict: Verdict = !check.ok ? 'fail' : check.warning === true ? 'warn' : 'ok';
  const lines = [`${LABELS[verdict]}  ${check.check.padEnd(CHECK_WIDTH)} ${shown(check.detail)}`];
  const files = check.files ?? [];
  // A single file is named in the detail itself.
  if (files.length < 2) return lines;
  for (const { file, problem } of files.slice(0, LISTED_PROBLEMS)) lines.push(`${FILE_INDENT}${shown(`${file}: ${problem}`)}`);
  if (files.length > LISTED_PROBLEMS) lines.push(`${FILE_INDENT}… and ${groupThousands(files.length - LISTED_PROBLEMS)} more: argo doctor --json lists them all`);
  return lines;
}

/**
 * Checks each piece argo needs, one line each on stdout; if any fails, a RuntimeError (exit 1) with
 * the one line for stderr (failureLine). `command` is the doctor command commander passes to the
 * action: with it, options given before `doctor` (`argo --home X doctor`) count too, and when an
 * option is given on both sides the one after `doctor` wins.
 */
export async function doctor(flags: FlagOverrides & { json?: boolean }, io: Io, command?: Command): Promise<Outcome> {
  const checks: DoctorCheck[] = [];
  // Details quote the server (its version, model names, errors): shown, never obeyed, on a terminal.
  const output = { raw: (flags as OutputFlags).raw === true };
  const shown = untrustedTextFor(io.stdout, output);
  const report: Report = (verdict, what, detail, files) => {
    const check: DoctorCheck = { check: what, ok: verdict !== 'fail', detail, ...(verdict === 'warn' ? { warning: true as const } : {}), ...(files !== undefined ? { files } : {}) };
    checks.push(check);
    if (flags.json !== true) io.stdout.write(reportLines(check, shown).map((line) => `${line}\n`).join(''));
  };
  const outcome = await runChecks(flags, report, command);
  if (flags.json === true) io.stdout.write(jsonTextFor(io.stdout, output)(`${JSON.stringify({ ok: outcome === 'ok', checks })}\n`));
  const failure = failureLine(checks);
  if (failure !== null) throw new RuntimeError(failure);
  return outcome;
}

/**
 * The line a failing doctor ends with on stderr, after its report on stdout: how many checks failed
 * and which, then the first one's detail, which names its fix (the first failure often causes the rest).
 */
export function failureLine(checks: readonly DoctorCheck[]): string | null {
  const failed = checks.filter((check) => !check.ok);
  const [first] = failed;
  if (first === undefined) return null;
  if (failed.length === 1) return `doctor: the ${first.check} check failed: ${first.detail}`;
  return `doctor: ${plural(failed.length, 'check')} failed (${failed.map((check) => check.check).join(', ')}); ${first.check}: ${first.detail}`;
}

type Report = (verdict: Verdict, what: string, detail: string, files?: FileProblem[]) => void;

async function runChecks(flags: FlagOverrides, report: Report, command: Command | undefined): Promise<Outcome> {
  let failed = 0;
  const check = (ok: boolean, what: string, detail: string, files?: FileProblem[]): void => {
    if (!ok) failed++;
    report(ok ? 'ok' : 'fail', what, detail, files);
  };
  let settings;
  try {
    settings = settingsFor(doctorFlags(flags, command));
    check(true, 'config', `${settings.paths.config} (or defaults)${raisedBudgetsNote(settings.agent.raisedBudgets)}`);
  } catch (error) {
    check(false, 'config', error instanceof ArgoError ? error.message : String(error));
    return 'failed';
  }
  const tools = await toolsCheck(settings);
  if (tools !== null) check(tools.ok, 'tools', tools.detail);
  const data = await checkDataHome(settings);
  // A chat_history a chat would refuse fails here, in the chat's own words.
  const history = chatHistoryProblem(settings.home);
  const dataLine = dataReport({ ...data, files: [...data.files, ...(history === null ? [] : [history])] }, settings.home);
  // A home others may write in works, with their files refused: a warning, not a failure.
  if (dataLine.ok && data.warning !== undefined) report('warn', 'data', data.warning);
  else check(dataLine.ok, 'data', dataLine.detail);
  const journal = unfinishedDir(settings.home);
  const journalUsable = data.home?.cannot !== 'make' && !data.folders.some((folder) => folder.path === journal);
  const recovery = await recoverUnfinished(settings);
  const unfinished = unfinishedReport(recovery, journal, journalUsable);
  check(unfinished.ok, 'unfinished', unfinished.detail, unfinished.files);
  // Looked for after recovery; a turn it saved there itself is told on the unfinished line already.
  const savedNow = new Set(recovery.rescued.map((turn) => turn.file));
  const rescued = (await rescuedFiles(settings.home).catch(() => [])).filter((file) => !savedNow.has(file));
  if (rescued.length > 0) report('warn', 'rescued', rescuedReport(rescued.length, rescuedDir(settings.home)));
  const askMs = doctorAskMs(settings.timeouts.idleMs);
  const transport = new OllamaTransport({ host: settings.host, attempts: 1, initialDelayMs: 0, idleMs: askMs, fetch: oneShotFetch() });
  let version: string;
  try {
    version = await transport.version();
    check(true, 'ollama', `Ollama ${version} at ${settings.host}`);
  } catch (error) {
    check(false, 'ollama', (error as Error).message);
    return 'failed';
  }
  const tooOld = missingFeaturesLine(parseVersion(version));
  if (tooOld !== null) report('warn', 'features', tooOld);
  const outcome = (): Outcome => (failed === 0 ? 'ok' : 'failed');
  const askFailure = (error: unknown): string => questionFailure(settings.host, error, CLI_HINTS, askMs);
  let installed: string[];
  try {
    installed = await transport.installedModels();
  } catch (error) {
    check(false, 'model', `cannot list the installed models: ${askFailure(error)}`);
    return outcome();
  }
  const wanted = fullModelName(settings.model);
  const found = installed.find((name) => fullModelName(name) === wanted);
  if (found === undefined) {
    const suggested = await transport.answeringModel(installed);
    check(false, 'model', `${settings.model} is not installed (installed: ${installedNames(installed) || 'none'}); ${howToGetModel(settings.model)}${orInstalledModel(CLI_HINTS, suggested)}`);
    return outcome();
  }
  check(true, 'model', `${settings.model} is installed`);
  const capabilities = await transport.capabilities(found).catch((error: unknown) => ({ failure: askFailure(error) }));
  const endpoint = endpointReport(settings.api, settings.model, capabilities, { tools: usesTools(settings) ? settings.agent.toolsSource : null, version: parseVersion(version) });
  check(endpoint.ok, 'endpoint', endpoint.detail);
  return outcome();
}

/** How long doctor waits for each of Ollama's answers: a stuck Ollama is a finding, not a two-minute silence. */
const DOCTOR_ASK_MAX_MS = 10_000;

/** The wait for the model list and a model's details: `timeouts.idleMs`, at most 10 s. */
export function doctorAskMs(idleMs: number): number {
  return Math.min(idleMs, DOCTOR_ASK_MAX_MS);
}

/** What the turns doctor checks for ask of Ollama beyond an answer. */
export interface EndpointNeeds {
  /** Where the tools come from (config.json's "tools"), when tools are on; null when off. */
  tools: string | null;
  /** The server's release; null when unknown (a build from source). */
  version: OllamaVersion | null;
}

const NO_NEEDS: EndpointNeeds = { tools: null, version: null };

/**
 * Whether the model can answer on the endpoint: /api/chat and /api/generate both answer only with a
 * model that has "completion" (an embedding model has not), and with tools on, only /api/chat does,
 * only with a model that has "tools" (Ollama refuses every such turn: "does not support tools") and
 * only from 0.2.6. /api/chat came in 0.1.14. An Ollama too old to report capabilities (none listed)
 * cannot be checked for them, and passes; one whose /api/show failed (`failure`) cannot either, and fails.
 */
export function endpointReport(api: string, model: string, capabilities: readonly string[] | { failure: string }, needs: EndpointNeeds = NO_NEEDS): { ok: boolean; detail: string } {
  const { tools, version } = needs;
  if (api === 'chat' && version !== null && !hasFeature(version, 'chat')) {
    const instead = tools === null ? ', or ask with --api generate' : '';
    return { ok: false, detail: `/api/chat needs Ollama ${FEATURES.chat.since} or newer, and this is ${versionText(version)}; upgrade Ollama${instead} (docs/troubleshooting.md, "Ollama versions")` };
  }
  if (tools !== null && api !== 'chat') {
    return { ok: false, detail: `tools are on (${tools}) and need /api/chat, not /api/${api}: drop --api ${api} (or "api" in config.json), or remove "tools" from config.json` };
  }
  if (tools !== null && version !== null && !hasFeature(version, 'tools')) {
    return { ok: false, detail: `tools are on (${tools}) and need Ollama ${FEATURES.tools.since} or newer, and this is ${versionText(version)}; upgrade Ollama, or remove "tools" from config.json` };
  }
  if ('failure' in capabilities) {
    const { failure } = capabilities;
    return {
      ok: false,
      detail: `/api/${api} cannot be checked: the capabilities of ${model} are unknown, as /api/show failed (${failure}); "ollama show ${model}" says why, and if it fails there too, ${howToGetModel(model)} again`,
    };
  }
  const listed = `model capabilities: ${capabilities.join(', ') || 'unknown'}`;
  if (capabilities.length > 0 && !capabilities.includes('completion')) {
    return { ok: false, detail: `/api/${api} needs the "completion" capability, which ${model} does not have (${listed}); choose another model with --model` };
  }
  if (tools !== null && capabilities.length > 0 && !capabilities.includes('tools')) {
    return {
      ok: false,
      detail: `tools are on (${tools}) and need the "tools" capability, which ${model} does not have (${listed}); choose a model that has it with --model ("ollama show MODEL" lists its capabilities), or remove "tools" from config.json`,
    };
  }
  return { ok: true, detail: `/api/${api}${tools === null ? '' : ' with tools'} (${listed})` };
}

/** Budgets an earlier version's floor let through, taken as this one's (config.json need not change). */
function raisedBudgetsNote(tools: readonly string[]): string {
  if (tools.length === 0) return '';
  return `; toolBudgets under ${MIN_TOOL_BUDGET}, which earlier versions took, count as ${MIN_TOOL_BUDGET} (${tools.map((tool) => JSON.stringify(tool)).join(', ')})`;
}

/** What Argo offers that each feature serves, as doctor names it; oldest first. */
const OFFERED: readonly [OllamaFeature, string][] = [
  ['chat', "/api/chat (argo's default --api, agent runs, argo serve)"],
  ['tools', 'agent runs and client tools'],
  ['streamedToolCalls', 'streamed agent rounds'],
  ['schemaFormat', 'argo serve\'s JSON schema response_format'],
  ['capabilities', "checking a model's capabilities"],
  ['defaultWindow4096', 'a 4096-token default window'],
  ['think', '--think'],
  ['thinkLevels', '--think low/medium/high'],
  ['logprobs', "argo serve's log probabilities (logprobs)"],
  ['thinkLevelsAnyModel', '--think levels for models other than gpt-oss'],
  ['thinkMax', '--think max'],
];

/** The warning for an Ollama too old for some of what Argo offers, naming each with its release; null when it has all (or its release is unknown). */
export function missingFeaturesLine(version: OllamaVersion | null): string | null {
  const missing = OFFERED.filter(([feature]) => !hasFeature(version, feature));
  if (version === null || missing.length === 0) return null;
  const listed = missing.map(([feature, words]) => `${words} (${FEATURES[feature].since})`).join(', ');
  return `Ollama ${versionText(version)} is too old for ${listed}; upgrade Ollama to use them (docs/troubleshooting.md, "Ollama versions")`;
}

/**
 * config.json's tool definitions and its "tools" list, resolved as a run would (no MCP server is
 * started): a question with --tools or config tools refuses what fails here. Null (no line) when
 * config.json has none of them.
 */
async function toolsCheck(settings: Settings): Promise<{ ok: boolean; detail: string } | null> {
  const { tools: listed, toolsets, commandTools, mcpServers: servers } = settings.agent;
  const defined = [toolsets, commandTools, servers].some((record) => Object.keys(record).length > 0);
  if (listed.length === 0 && !defined) return null;
  try {
    const { tools, mcpServers, mcpTools } = await checkToolNames(settings);
    if (listed.length === 0) return { ok: true, detail: 'its definitions are sound; none is used without --tools' };
    const named = [...tools, ...mcpServers.map((server) => `mcp:${server}`), ...(mcpTools ?? [])];
    return { ok: true, detail: `${settings.agent.toolsSource} gives ${named.length === 0 ? 'no tools' : named.join(', ')}` };
  } catch (error) {
    return { ok: false, detail: error instanceof ArgoError ? error.message : String(error) };
  }
}

/**
 * The data check's line: each place of the data home a turn cannot use, and why, then what to do about
 * the first. Folders the home's own permissions keep from being made are named with the home.
 */
export function dataReport(check: DataHomeCheck, home: string): { ok: boolean; detail: string } {
  const { home: homeProblem, folders, files } = check;
  if (homeProblem === null && folders.length === 0 && files.length === 0) return { ok: true, detail: `${home} is writable` };
  const unmade =
    homeProblem?.cannot === 'write' ? folders.filter((folder) => folder.cannot === 'make' && errnoOf(folder.error) !== undefined && errnoOf(folder.error) === errnoOf(homeProblem.error)) : [];
  const clauses: string[] = [];
  if (homeProblem?.cannot === 'write') {
    const why = `${homeProblem.path} is not writable (${fileProblem(homeProblem.error)})`;
    const names = unmade.map((folder) => `${relative(home, folder.path)}/`);
    clauses.push(names.length === 0 ? `${why}: the memo and chat history cannot be saved in it` : `${why}: ${names.join(', ')} cannot be made in it, nor the memo or chat history saved`);
  } else if (homeProblem !== null) {
    clauses.push(placeClause(homeProblem));
  }
  for (const folder of folders) if (!unmade.includes(folder)) clauses.push(placeClause(folder));
  for (const file of files) clauses.push(placeClause(file));
  // An Argo error (a file where a folder goes, a link) names its own fix; a system one gets its code's.
  const needsFix = [homeProblem, ...folders, ...files].find((problem): problem is DataHomeProblem => problem !== null && !(problem.error instanceof ArgoError));
  const fix = needsFix === undefined ? '' : `; ${fileFix(needsFix.error) ?? 'choose another with --home or ARGO_HOME'}`;
  return { ok: false, detail: `${clauses.join('; ')}${fix}` };
}

/** The chat history as a chat starting on a terminal reads it: null when it would be used, else why a chat would refuse to start. */
function chatHistoryProblem(home: string): DataHomeProblem | null {
  const file = chatHistoryFile(home);
  try {
    recallableHistory(file);
    return null;
  } catch (error) {
    return { path: file, cannot: 'read', error };
  }
}

/** The warning for `count` files of turns the log could not take, waiting in `dir` to be added back. */
export function rescuedReport(count: number, dir: string): string {
  const them = count === 1 ? 'it' : 'them';
  return `${plural(count, 'file')} in ${dir} ${count === 1 ? 'holds a turn' : 'hold turns'} the log could not take: add ${them} back to the log as docs/troubleshooting.md says ("cannot write the log"), then remove ${them}`;
}

function placeClause({ path, cannot, error }: DataHomeProblem): string {
  if (error instanceof ArgoError) return error.message;
  const says = { make: 'cannot be made', write: 'is not writable', read: 'cannot be read' }[cannot];
  return `${path} ${says} (${fileProblem(error)})`;
}

/**
 * The journal of unfinished turns: what runs now, what was logged now for an argo that is gone, and
 * what could not be. `journalUsable` false: the data check found the folder cannot be made or written.
 */
export function unfinishedReport(recovery: Recovery, dir: string, journalUsable = true): { ok: boolean; detail: string; files?: FileProblem[] } {
  if (!journalUsable) {
    return { ok: false, detail: `${dir} cannot be used, so a turn is not kept there while it is answered and would be lost if argo were killed first; the data check says why` };
  }
  const { recovered, alreadyLogged, rescued, inProgress, elsewhere, problems } = recovery;
  const [problem] = problems;
  if (problem?.folder === true) return { ok: false, detail: `${problem.file} ${problem.problem}; ${FOLDER_FIX}` };
  if (problem !== undefined) {
    const fix = `move such a file out of ${dir} once you have kept what you need from it`;
    const files = problems.map(({ file, problem: why }) => ({ file, problem: why }));
    if (problems.length === 1) return { ok: false, detail: `${problem.file}: ${problem.problem}; ${fix}`, files };
    return { ok: false, detail: `${groupThousands(problems.length)} files in ${dir} cannot be logged; ${fix}`, files };
  }
  const parts: string[] = [];
  if (inProgress.length > 0) parts.push(`${plural(inProgress.length, 'turn')} in progress (argo pid ${[...new Set(inProgress.map((turn) => turn.pid))].join(', ')})`);
  if (recovered.length > 0) parts.push(`logged ${plural(recovered.length, 'turn')} an earlier argo left unfinished (killed or crashed) now: argo logs --status interrupted`);
  if (alreadyLogged.length > 0) parts.push(`removed ${plural(alreadyLogged.length, 'file')} of turns logged already`);
  if (rescued.length > 0) parts.push(`${plural(rescued.length, 'turn')} an earlier argo left unfinished ${rescued.length === 1 ? 'is' : 'are'} saved in ${rescued.map((turn) => turn.file).join(', ')}, not in the log: add ${rescued.length === 1 ? 'it' : 'them'} back as docs/troubleshooting.md says`);
  const [inContainers, onHosts] = [elsewhere.filter((turn) => turn.container !== undefined), elsewhere.filter((turn) => turn.container === undefined)];
  if (onHosts.length > 0) {
    const hosts = new Set(onHosts.map(hostNamed));
    parts.push(`${plural(onHosts.length, 'turn')} of argo on ${[...hosts].join(', ')}, left to that host`);
  }
  if (inContainers.length > 0) {
    const namespaces = new Set(inContainers.map((turn) => turn.container));
    parts.push(`${plural(inContainers.length, 'turn')} of argo in another container on this machine (${[...namespaces].join(', ')}), left to it`);
  }
  return { ok: true, detail: parts.length === 0 ? 'no turn left unfinished' : parts.join('; ') };
}

/** The doctor options given anywhere on the command line; those after `doctor` win. */
function doctorFlags(flags: FlagOverrides, command: Command | undefined): FlagOverrides {
  const merged: FlagOverrides = {};
  const all = command ? command.optsWithGlobals<Record<string, unknown>>() : {};
  for (const key of DOCTOR_OPTIONS) {
    const value = flags[key] ?? all[key];
    if (typeof value === 'string') merged[key] = value;
  }
  return merged;
}

