// Fetching from the JSON API. Errors carry the server's {"error"} text.

export class APIError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export async function getJSON<T>(url: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(url, { headers: { Accept: "application/json" }, signal });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const msg =
      body && typeof body === "object" && "error" in body ? String((body as { error: unknown }).error) : res.statusText;
    throw new APIError(`${msg} (HTTP ${res.status})`, res.status);
  }
  return body as T;
}

// errorMessage turns anything thrown into a line of text for the page.
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
