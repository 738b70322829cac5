import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { prefetchTranscript } from "../src/api.js";
import Editor from "../src/screens/editor/Editor.jsx";
import { json } from "./fixtures.js";

const TRANSCRIPT = {
  ok: true,
  language: "english",
  duration: 6000,
  format: "srt",
  original: [
    { start: 0, end: 2000, text: "Hello Ortiga, welcome." },
    { start: 2000, end: 4000, text: "ortiga said hi." },
  ],
  edited: null,
};

/** A JSON answer with the text's version as its ETag. */
function versioned(status, body, version) {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ETag: `"${version}"` } });
}

/**
 * Answers the editor's calls as the server does, versions included, recording them:
 * `server.saveElsewhere(cues)` is a save from another tab or device.
 */
function serve(transcript = TRANSCRIPT) {
  const calls = [];
  const server = { version: 0, edited: transcript.edited, calls };
  server.saveElsewhere = (cues) => {
    server.version++;
    server.edited = cues;
  };
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url, init = {}) => {
      const ifMatch = init.headers?.["If-Match"];
      calls.push({ url, method: init.method, ifMatch, body: init.body && JSON.parse(init.body) });
      if (init.method === "PUT" || init.method === "DELETE") {
        if (ifMatch !== `"${server.version}"`) return json(409, { ok: false, error: { code: "edit_conflict" } });
        server.version++;
        server.edited = init.method === "PUT" ? JSON.parse(init.body).cues : null;
        return versioned(200, init.method === "PUT" ? { ok: true, edited: server.edited } : { ok: true }, server.version);
      }
      return versioned(200, { ...transcript, edited: server.edited }, server.version);
    }),
  );
  return server;
}

afterEach(() => vi.unstubAllGlobals());

describe("the transcript editor", () => {
  it("edits, replaces everywhere, splits by keyboard, saves, and keeps drafts over a reload", async () => {
    const { calls } = serve();
    const { unmount } = render(<Editor token="tok" />);
    const first = await screen.findByRole("textbox", { name: /Cue 1,/ });
    expect(calls[0]).toMatchObject({ url: "/r/tok/transcript", method: "GET" });

    fireEvent.change(screen.getByTestId("editor-find"), { target: { value: "ortiga" } });
    fireEvent.change(screen.getByTestId("editor-replace"), { target: { value: "Ortega" } });
    fireEvent.click(screen.getByTestId("editor-replace-all"));
    expect(first).toHaveProperty("value", "Hello Ortega, welcome.");
    expect(screen.getByText("Replacements: 2")).toBeTruthy();

    first.focus();
    first.setSelectionRange(13, 13);
    fireEvent.select(first);
    fireEvent.click(screen.getByTestId("editor-split"));
    expect(screen.getAllByRole("textbox", { name: /^Cue \d/ })).toHaveLength(3);
    fireEvent.keyDown(first, { code: "KeyZ", ctrlKey: true });
    expect(screen.getAllByRole("textbox", { name: /^Cue \d/ })).toHaveLength(2);
    fireEvent.keyDown(first, { code: "KeyY", ctrlKey: true });
    expect(screen.getAllByRole("textbox", { name: /^Cue \d/ })).toHaveLength(3);

    // Unsaved: kept in local storage, restored after a reload.
    await waitFor(() => expect(localStorage.getItem("edit:tok")).toContain("Ortega"));
    unmount();
    render(<Editor token="tok" />);
    await screen.findByText(/unsaved changes from before are back/);
    expect(screen.getAllByRole("textbox", { name: /^Cue \d/ })).toHaveLength(3);

    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await screen.findByText(/Saved\./);
    const put = calls.find((c) => c.method === "PUT");
    expect(put.body.cues.map((c) => c.text)).toEqual(["Hello Ortega,", "welcome.", "Ortega said hi."]);
    expect(put.ifMatch).toBe('"0"');
    await waitFor(() => expect(localStorage.getItem("edit:tok")).toBeNull());
  });

  it("keeps the visitor's text when another device saved first, and loads the newer version on request", async () => {
    const server = serve();
    render(<Editor token="conflict" />);
    const first = await screen.findByRole("textbox", { name: /Cue 1,/ });
    server.saveElsewhere([{ start: 0, end: 2000, text: "From the phone." }]);
    fireEvent.change(first, { target: { value: "From the laptop." } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect((await screen.findByTestId("error")).dataset.code).toBe("edit_conflict");
    expect(screen.getByRole("textbox", { name: /Cue 1,/ })).toHaveProperty("value", "From the laptop.");
    await waitFor(() => expect(localStorage.getItem("edit:conflict")).toContain("From the laptop."));
    expect(server.edited[0].text).toBe("From the phone.");

    fireEvent.click(screen.getByTestId("editor-load-newer"));
    await screen.findByText(/newer version is loaded/);
    expect(screen.getAllByRole("textbox", { name: /^Cue \d/ }).map((e) => e.value)).toEqual(["From the phone."]);
    expect(screen.queryByTestId("error")).toBeNull();
    fireEvent.keyDown(screen.getByRole("textbox", { name: /Cue 1,/ }), { code: "KeyZ", ctrlKey: true });
    expect(screen.getByRole("textbox", { name: /Cue 1,/ })).toHaveProperty("value", "From the laptop.");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await screen.findByText(/Saved\./);
    expect(server.calls.filter((c) => c.method === "PUT").map((c) => c.ifMatch)).toEqual(['"0"', '"1"']);
    expect(server.edited[0].text).toBe("From the laptop.");
  });

  it("goes back to the original after asking", async () => {
    const { calls } = serve();
    vi.stubGlobal("confirm", () => true);
    render(<Editor token="tok" />);
    await screen.findByRole("textbox", { name: /Cue 1,/ });
    fireEvent.click(screen.getByRole("button", { name: "Back to the original" }));
    await screen.findByText("The original transcript is back.");
    expect(calls.at(-1)).toMatchObject({ url: "/r/tok/transcript", method: "DELETE", ifMatch: '"0"' });
  });

  it("shows the engine's speakers and renames one in every cue, saved with the cues", async () => {
    const spoken = { ...TRANSCRIPT, original: TRANSCRIPT.original.map((c, i) => ({ ...c, speaker: ["A", "B"][i] })) };
    const calls = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url, init = {}) => {
        calls.push({ method: init.method, body: init.body && JSON.parse(init.body) });
        if (init.method === "PUT") return json(200, { ok: true, edited: JSON.parse(init.body).cues });
        return json(200, spoken);
      }),
    );
    render(<Editor token="tok" />);
    await screen.findByRole("textbox", { name: "Cue 1, 0:00.0, A" });
    expect(screen.getAllByTestId("cue-speaker").map((e) => e.textContent)).toEqual(["A", "B"]);
    fireEvent.change(screen.getByLabelText("New name for A"), { target: { value: "Dr. Ortega" } });
    fireEvent.click(screen.getAllByRole("button", { name: "Rename everywhere" })[0]);
    expect(screen.getAllByTestId("cue-speaker").map((e) => e.textContent)).toEqual(["Dr. Ortega", "B"]);
    expect(screen.getByLabelText("New name for Dr. Ortega")).toBeTruthy();
    fireEvent.keyDown(screen.getByRole("textbox", { name: /^Cue 1,/ }), { code: "KeyZ", ctrlKey: true });
    expect(screen.getAllByTestId("cue-speaker").map((e) => e.textContent)).toEqual(["A", "B"]);
    fireEvent.keyDown(screen.getByRole("textbox", { name: /^Cue 1,/ }), { code: "KeyY", ctrlKey: true });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await screen.findByText(/Saved\./);
    expect(calls.find((c) => c.method === "PUT").body.cues.map((c) => c.speaker)).toEqual(["Dr. Ortega", "B"]);
  });

  it("shows no speakers where the engine gives none", async () => {
    serve();
    render(<Editor token="tok" />);
    await screen.findByRole("textbox", { name: /Cue 1,/ });
    expect(screen.queryByTestId("editor-speakers")).toBeNull();
    expect(screen.queryAllByTestId("cue-speaker")).toHaveLength(0);
  });

  it("takes the transcript asked for before it mounted, asking once", async () => {
    const { calls } = serve();
    prefetchTranscript("early");
    prefetchTranscript("early");
    expect(calls).toHaveLength(1);
    render(<Editor token="early" />);
    await screen.findByRole("textbox", { name: /Cue 1,/ });
    expect(calls.map((c) => c.url)).toEqual(["/r/early/transcript"]);
  });

  it("says when the link has no transcript", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => json(404, { ok: false, error: { code: "no_transcript" } })));
    render(<Editor token="tok" />);
    expect((await screen.findByTestId("error")).dataset.code).toBe("no_transcript");
  });
});
