// Retries a call while its failure is retryable, as an agent's program would.
let attempts = 0;
for (;;) {
  attempts++;
  try {
    const value = await flaky({ attempt: attempts });
    return { value, attempts };
  } catch (e) {
    if (!(e instanceof ToolError) || !e.retryable || attempts >= 5) throw e;
  }
}
