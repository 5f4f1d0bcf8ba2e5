export interface SseBlock {
  event?: string;
  data?: unknown;
  comment?: string;
  at: number;
}

/** Reads a text/event-stream response block by block, stamping when each block arrived. */
export async function* readSse(response: Response): AsyncGenerator<SseBlock> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const text = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const block: SseBlock = { at: performance.now() };
      for (const line of text.split('\n')) {
        if (line.startsWith(':')) block.comment = line.slice(1).trim();
        else if (line.startsWith('event: ')) block.event = line.slice(7);
        else if (line.startsWith('data: ')) block.data = JSON.parse(line.slice(6));
      }
      yield block;
    }
  }
}
