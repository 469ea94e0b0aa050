/**
 * Label selectors in their string form (`app=web,tier in (a,b),!canary`),
 * evaluated locally: the informer cache filters lists with them and the
 * label-selector predicate filters events.
 */
export type Requirement =
  { key: string; op: 'in' | 'notin'; values: string[] } | { key: string; op: 'exists' | 'doesnotexist' };

/** kubernetes LabelSelector (matchLabels / matchExpressions). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

/** Parses a selector string; throws with the offending part on bad input. */
export function parseSelector(selector: string): Requirement[] {
  const requirements: Requirement[] = [];
  for (const part of splitTopLevel(selector)) {
    const term = part.trim();
    if (!term) continue;
    let match: RegExpMatchArray | null;
    if ((match = term.match(/^([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)$/))) {
      requirements.push({
        key: match[1]!,
        op: match[2] as 'in' | 'notin',
        values: match[3]!
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean),
      });
    } else if ((match = term.match(/^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$/))) {
      requirements.push({ key: match[1]!, op: match[2] === '!=' ? 'notin' : 'in', values: [match[3]!] });
    } else if ((match = term.match(/^!\s*([^\s!=(),]+)$/))) {
      requirements.push({ key: match[1]!, op: 'doesnotexist' });
    } else if ((match = term.match(/^([^\s!=(),]+)$/))) {
      requirements.push({ key: match[1]!, op: 'exists' });
    } else {
      throw new Error(`invalid label selector term "${term}" in "${selector}"`);
    }
  }
  return requirements;
}

/** Converts a LabelSelector object to requirements. */
export function requirementsOf(selector: LabelSelector): Requirement[] {
  const requirements: Requirement[] = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({
    key,
    op: 'in' as const,
    values: [value],
  }));
  for (const expression of selector.matchExpressions ?? []) {
    const op = expression.operator.toLowerCase() as Requirement['op'];
    requirements.push(
      op === 'in' || op === 'notin'
        ? { key: expression.key, op, values: expression.values ?? [] }
        : { key: expression.key, op },
    );
  }
  return requirements;
}

/** Whether `labels` satisfy every requirement (an empty selector matches all). */
export function matchesLabels(requirements: Requirement[], labels: Record<string, string> | undefined): boolean {
  const have = labels ?? {};
  return requirements.every((requirement) => {
    const present = Object.prototype.hasOwnProperty.call(have, requirement.key);
    switch (requirement.op) {
      case 'exists':
        return present;
      case 'doesnotexist':
        return !present;
      case 'in':
        return present && requirement.values.includes(have[requirement.key]!);
      case 'notin':
        return !present || !requirement.values.includes(have[requirement.key]!);
    }
  });
}

function splitTopLevel(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of selector) {
    if (char === '(') depth++;
    if (char === ')') depth--;
    if (char === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}
