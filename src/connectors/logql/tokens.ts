// The external tokenizers of logql.grammar: Grafana's lezer-logql src/tokens.js (commit
// 510c1471858a11bc98016449840a0502bb5fae72, Copyright 2022 Grafana Labs, Apache License 2.0, LICENSE
// beside this file), typed for TypeScript and importing the generated terms from "./parser.terms.ts".
// Its keyword tables have no prototype: looked up in a plain object, a label named `constructor`
// or `__proto__` found Object's own properties and did not parse.
import type { Stack } from '@lezer/lr';
import {
  Json,
  Logfmt,
  Unpack,
  Pattern,
  Regexp,
  LabelFormat,
  LineFormat,
  LabelReplace,
  Vector,
  Offset,
  By,
  Without,
  And,
  Or,
  Unless,
  Bool,
  On,
  Ignoring,
  GroupLeft,
  GroupRight,
  Unwrap,
  Sum,
  Avg,
  Count,
  Max,
  Min,
  Stddev,
  Stdvar,
  Bottomk,
  Topk,
  Decolorize,
  Drop,
  Keep,
  Sort,
  Sort_Desc,
} from './parser.terms.ts';

const keywordTokens: Record<string, number> = Object.assign(Object.create(null) as Record<string, number>, {
  json: Json,
  logfmt: Logfmt,
  unpack: Unpack,
  pattern: Pattern,
  regexp: Regexp,
  label_format: LabelFormat,
  line_format: LineFormat,
  label_replace: LabelReplace,
  vector: Vector,
  offset: Offset,
  bool: Bool,
  on: On,
  ignoring: Ignoring,
  group_left: GroupLeft,
  group_right: GroupRight,
  unwrap: Unwrap,
  decolorize: Decolorize,
  drop: Drop,
  keep: Keep,
});

export const specializeIdentifier = (value: string, _stack: Stack): number => {
  return keywordTokens[value.toLowerCase()] || -1;
};

const contextualKeywordTokens: Record<string, number> = Object.assign(Object.create(null) as Record<string, number>, {
  by: By,
  without: Without,
  and: And,
  or: Or,
  unless: Unless,
  sum: Sum,
  avg: Avg,
  count: Count,
  max: Max,
  min: Min,
  stddev: Stddev,
  stdvar: Stdvar,
  bottomk: Bottomk,
  topk: Topk,
  sort: Sort,
  sort_desc: Sort_Desc,
});

export const extendIdentifier = (value: string, _stack: Stack): number => {
  return contextualKeywordTokens[value.toLowerCase()] || -1;
};
