/**
 * Mocha plugin (.mocharc `require`): ends the run with what ran against a real peer, what was
 * skipped and why, and the command that makes the skipped tests run. The global fixtures run once
 * in the main process, also with --parallel; the tests of every worker append their records to
 * one file (test/helpers/peers.ts) that the teardown reads.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { enablingCommand, peerLabel, RECORD_FILE_VARIABLE, type PeerRecord } from './peers.ts';

interface Outcome {
  tests: number;
  files: Set<string>;
  reasons: Set<string>;
}

const fileName = (file: string) => path.basename(file).replace(/\.test\.ts$/, '');
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

function readRecords(file: string): PeerRecord[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as PeerRecord);
}

/** The summary's lines: one per peer and outcome, skipped ones last, then how to run them. */
export function summarize(records: PeerRecord[]): string[] {
  const outcomes = new Map<string, Outcome & Pick<PeerRecord, 'peer' | 'ran'>>();
  for (const entry of records) {
    const key = `${entry.ran}:${entry.peer}`;
    const outcome = outcomes.get(key) ?? { peer: entry.peer, ran: entry.ran, tests: 0, files: new Set(), reasons: new Set() };
    outcome.tests += entry.tests;
    outcome.files.add(fileName(entry.file));
    if (entry.reason) outcome.reasons.add(entry.reason);
    outcomes.set(key, outcome);
  }
  if (outcomes.size === 0) return [];
  const sorted = [...outcomes.values()].sort((a, b) => Number(b.ran) - Number(a.ran) || peerLabel(a.peer).localeCompare(peerLabel(b.peer)));
  const lines = ['Tests that need a real peer (test/helpers/peers.ts):'];
  for (const outcome of sorted) {
    const where = `${plural(outcome.tests, 'test')} in ${[...outcome.files].sort().join(', ')}`;
    const why = outcome.ran ? '' : ` (${[...outcome.reasons].join('; ')})`;
    lines.push(`  ${outcome.ran ? 'ran    ' : 'skipped'}  ${peerLabel(outcome.peer)}: ${where}${why}`);
  }
  const skipped = sorted.filter((outcome) => !outcome.ran);
  if (skipped.length > 0) {
    const commands = [...new Set(skipped.map((outcome) => enablingCommand(outcome.peer)))];
    lines.push(
      `${plural(
        skipped.reduce((sum, outcome) => sum + outcome.tests, 0),
        'test',
      )} skipped. To run them: ${commands.join('; ')}`,
    );
  }
  return lines;
}

let createdDir: string | undefined;

export function mochaGlobalSetup(): void {
  if (process.env[RECORD_FILE_VARIABLE]) return;
  createdDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-peers-'));
  process.env[RECORD_FILE_VARIABLE] = path.join(createdDir, 'records.jsonl');
}

export function mochaGlobalTeardown(): void {
  const file = process.env[RECORD_FILE_VARIABLE];
  if (!file) return;
  const lines = summarize(readRecords(file));
  if (lines.length > 0) console.log(`\n${lines.join('\n')}\n`);
  if (createdDir) {
    fs.rmSync(createdDir, { recursive: true, force: true });
    delete process.env[RECORD_FILE_VARIABLE];
    createdDir = undefined;
  }
}
