/**
 * A function's answers remembered by their key, at most `max` of them: past that, the answer
 * remembered first goes. What is remembered is what the function answered, so it must answer a
 * key the same every time. A null answer is not remembered (a forged session cookie is checked
 * again on every request), and neither is a throw.
 */
export function boundedMemo<V>(max: number, compute: (key: string) => V): (key: string) => V {
  const answers = new Map<string, V>();
  return (key) => {
    if (answers.has(key)) return answers.get(key)!;
    const answer = compute(key);
    if (answer !== null) {
      if (answers.size >= max) answers.delete(answers.keys().next().value!);
      answers.set(key, answer);
    }
    return answer;
  };
}
