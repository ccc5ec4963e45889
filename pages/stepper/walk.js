// The Stepper in the browser: the twenty steps arrive at once (pages/stepper/walk.py) and
// every move between them (Prev, Next, the keys, the slider, Jump to, a click on a node) is
// drawn here without asking the server. Nothing is computed here: every number is a string
// ln_core's values were formatted into; this only picks the step.
//
// One controller on the window holds the step and draws the three parts (the head, the
// graph, the numbers) for it. The server learns the step without a run of its own: the
// step is clicked into a hidden segmented control that does not rerun (on_change="ignore"),
// whose value Python reads on its next run, and the page's address is kept up to date for
// the share link. Where Python must act at once (an instructor publishing the step to the
// class, a quiz question to ask), a trigger reruns the Stepper's fragment.

const SVG = "http://www.w3.org/2000/svg";
const walk = (window.__lnlabWalk ||= { step: null, server: null, told: [], parts: new Map() });

function el(tag, attrs = {}, text) {
  const node = tag.startsWith("svg:")
    ? document.createElementNS(SVG, tag.slice(4))
    : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function clamp(n) {
  return Math.min(walk.steps.length, Math.max(1, n));
}

// The hidden control's button for step n. The control's buttons are radios: the chosen one
// says so in aria-checked.
function channelButton(n) {
  const buttons = document.querySelectorAll(".st-key-w_step_browser button");
  return [...buttons].find((b) => b.textContent.trim() === String(n));
}

function chosen(n) {
  const target = channelButton(n);
  return !target || target.getAttribute("aria-checked") === "true";
}

// Clicked only when not already chosen: a click on the chosen one would clear it (two moves
// back to one step within the idle wait would tell it twice).
function tellChannel(n) {
  if (!channelButton(n)) return false;
  if (!chosen(n)) channelButton(n).click();
  walk.told.push(n);
  return true;
}

function keepAddress(n) {
  const url = new URL(window.location.href);
  url.searchParams.set("step", String(n));
  window.history.replaceState(window.history.state, "", url);
}

// Python hears of the move at once only where it must act on it; the control must hold the
// new step before the rerun is asked for, or the rerun would carry the old one.
function sendWhenHeld(n, tries = 0) {
  if (walk.step !== n) return;
  if (chosen(n) || tries > 30) walk.send(n);
  else requestAnimationFrame(() => sendWhenHeld(n, tries + 1));
}

// Each step's lines (typeset by Streamlit, pages/stepper/step_view.py) are shown by their
// wrapper's own style: a rule keyed to the page would make the browser restyle the whole page.
// Every step's wrapper is set, not only the one shown before: the page's rule shows the step
// of the server's last run, whose lines can arrive after this step was drawn (a student who
// leaves the class's step gets the twenty steps' lines then). A following student's page has
// its step's lines alone, which the class's run for the next step replaces.
const NUMBERED = /^st-key-step_(lines|only)_(\d+)$/;
function showLines(n) {
  const parts = document.querySelectorAll(
    '.st-key-step_essentials [class*="st-key-step_lines_"], .st-key-step_essentials [class*="st-key-step_only_"]');
  for (const part of parts) {
    const key = [...part.classList].map((name) => NUMBERED.exec(name)).find(Boolean);
    if (key && part.parentElement) part.parentElement.style.display = key[2] === String(n) ? "flex" : "none";
  }
}

// What the server and the address bar hear of a move waits until the step is drawn: until
// the tab is idle, or, for a move Python must act on at once (sync: an instructor's, which
// every following student waits for), until the step's frame is painted (a busy projector's
// tab can wait the whole 250 ms for idle).
const later = window.requestIdleCallback
  ? (task) => window.requestIdleCallback(task, { timeout: 250 })
  : (task) => setTimeout(task, 50);
const afterPaint = (task) => requestAnimationFrame(() => setTimeout(task, 0));

function go(n, fromServer = false) {
  n = clamp(n);
  const moved = walk.step !== n;
  walk.step = n;
  document.documentElement.dataset.lnlabWalk = "on";
  for (const render of walk.parts.values()) render(n);
  showLines(n);
  keepHeadInView();
  if (fromServer) keepAddress(n);  // (a followed step's run leaves the address to this)
  if (fromServer || !moved) return;
  (walk.sync ? afterPaint : later)(() => {
    if (walk.step !== n) return;
    tellChannel(n);
    keepAddress(n);
    if (walk.sync && walk.send) sendWhenHeld(n);
  });
}
walk.go = go;

// The head stays below the app's header over the whole page, the guide at its foot too (a
// sticky position would hold it only within the step's own box). Only the head's own shift is
// written; a phone's stylesheet makes it static, and there it scrolls with the page.
function keepHeadInView() {
  const head = document.querySelector(".lnlab-part-head");
  if (!head) return;
  const shifted = head.lnlabShift || 0;
  const header = document.querySelector('[data-testid="stHeader"]');
  const below = header ? header.getBoundingClientRect().bottom : 0;
  const natural = head.getBoundingClientRect().top - shifted;
  const shift = getComputedStyle(head).position === "relative" ? Math.max(0, below - natural) : 0;
  if (shift !== shifted) {
    head.style.transform = shift ? `translateY(${shift}px)` : "";
    head.lnlabShift = shift;
  }
}
if (!walk.headKept) {
  document.addEventListener("scroll", keepHeadInView, { capture: true, passive: true });
  window.addEventListener("resize", keepHeadInView, { passive: true });
  walk.headKept = true;
}

// ---- the head: heading, Prev, Next, the slider and Jump to ------------------------------
function head(root) {
  const heading = el("h2", { class: "lnlab-heading lnlab-essential" });
  const nav = el("div", { class: "st-key-stepper_nav lnlab-nav lnlab-essential" });
  // The arrows are drawn by the stylesheet: the buttons' text is their label alone.
  const prev = el("button", { type: "button", class: "lnlab-button lnlab-prev" });
  prev.append(el("span", { class: "lnlab-label" }, "Prev"));
  const next = el("button", { type: "button", class: "lnlab-button lnlab-primary lnlab-next" });
  next.append(el("span", { class: "lnlab-label" }, "Next"));
  const sliderLabel = el("label", { class: "lnlab-slider" });
  const slider = el("input", { type: "range", min: "1", max: String(walk.steps.length), step: "1", "aria-label": "Step" });
  sliderLabel.append(el("span", { class: "lnlab-field" }, "Step"), slider);
  const jumpLabel = el("label", { class: "lnlab-jump" });
  const jump = el("select", { "aria-label": "Jump to" });
  for (const s of walk.steps) jump.append(el("option", { value: String(s.number) }, s.label));
  jumpLabel.append(el("span", { class: "lnlab-field" }, "Jump to"), jump);
  nav.append(prev, next, sliderLabel, jumpLabel);
  root.replaceChildren(heading, nav);
  prev.addEventListener("click", () => go(walk.step - 1));
  next.addEventListener("click", () => go(walk.step + 1));
  slider.addEventListener("input", () => go(Number(slider.value)));
  jump.addEventListener("change", () => go(Number(jump.value)));
  return (n) => {
    const s = walk.steps[n - 1];
    heading.textContent = s.heading;
    prev.disabled = n === 1;
    next.disabled = n === walk.steps.length;
    slider.value = String(n);
    slider.setAttribute("aria-valuetext", s.label);
    jump.value = String(n);
  };
}

// ---- the graph: the whole graph (wide screens) and the current node's focus --------------
function drawing(spec, cls) {
  const svg = el("svg:svg", {
    class: `lnlab-graph ${cls}`,
    viewBox: `0 0 ${spec.width} ${spec.height}`,
    width: String(spec.width),
    role: "group",
    "aria-label": "The computation graph: click a node to go to its step",
  });
  const defs = el("svg:defs");
  for (const kind of ["plain", "active"]) {
    const size = kind === "active" ? "14" : "9";
    const marker = el("svg:marker", {
      id: `lnlab-arrow-${cls}-${kind}`, viewBox: "0 0 10 10", refX: "9", refY: "5",
      markerUnits: "userSpaceOnUse", markerWidth: size, markerHeight: size, orient: "auto",
    });
    marker.append(el("svg:path", { d: "M 0 0 L 10 5 L 0 10 z", class: `lnlab-arrow-${kind}` }));
    defs.append(marker);
  }
  svg.append(defs);
  const edges = new Map();
  for (const edge of spec.edges) {
    const [x1, y1, x2, y2] = edge.ends;
    const line = el("svg:line", { x1, y1, x2, y2, class: "lnlab-edge", "marker-end": `url(#lnlab-arrow-${cls}-plain)` });
    edges.set(edge.id, line);
    svg.append(line);
  }
  const boxes = new Map();
  for (const box of spec.boxes) {
    const input = !box.name.match(/^\D/) || ["x", "gamma", "beta", "eps"].includes(box.name);
    const g = el("svg:g", { class: "lnlab-node", "data-node": box.name, tabindex: input ? "-1" : "0", role: input ? "img" : "button" });
    const left = box.x - box.w / 2;
    const top = box.y - box.h / 2;
    g.append(
      input
        ? el("svg:ellipse", { cx: box.x, cy: box.y, rx: box.w / 2, ry: box.h / 2 })
        : el("svg:rect", { x: left, y: top, width: box.w, height: box.h, rx: 8 })
    );
    const text = el("svg:text", { x: box.x, y: box.y, "text-anchor": "middle", "font-size": spec.font });
    const first = el("svg:tspan", { x: box.x, dy: input ? "0.35em" : "-0.25em", class: "lnlab-name" }, box.text);
    text.append(first);
    if (!input) text.append(el("svg:tspan", { x: box.x, dy: "1.2em", class: "lnlab-shape" }, ` ${box.tag}${walk.hover[box.name]?.shape || ""}`));
    g.append(text);
    boxes.set(box.name, g);
    svg.append(g);
  }
  return { svg, edges, boxes, cls };
}

function light(view, s) {
  for (const [name, g] of view.boxes) {
    const status = s.status[name];
    g.setAttribute("class", `lnlab-node lnlab-${status}`);
    const what = { current: "this step", pending: "not computed yet", forward: "value known", gradient: "gradient known", input: "given input", finished: "dx finished" }[status];
    // The name holds the box's visible text (its name, number and shape), then its status.
    g.setAttribute("aria-label", `${g.textContent.trim()}: ${what}`);
  }
  for (const [id, line] of view.edges) {
    const on = s.active.includes(id);
    line.setAttribute("class", on ? "lnlab-edge lnlab-active" : "lnlab-edge");
    line.setAttribute("marker-end", `url(#lnlab-arrow-${view.cls}-${on ? "active" : "plain"})`);
  }
}

function tip(tooltip, g, name) {
  const s = walk.steps[walk.step - 1];
  const info = walk.hover[name];
  const status = s.status[name];
  tooltip.replaceChildren();
  tooltip.append(el("strong", {}, walk.labels[name]));
  if (!info) {
    tooltip.append(el("div", {}, "a given input"));
  } else {
    tooltip.append(el("div", {}, `shape ${info.shape}`));
    const valueKnown = status === "forward" || status === "gradient" || status === "current";
    const gradientKnown = status === "gradient" || (status === "current" && s.backward);
    if (s.locked !== undefined) tooltip.append(el("div", {}, "its numbers: see the step"));
    else {
      tooltip.append(el("div", {}, valueKnown ? `value (${walk.vector}): ${info.value}` : "value: not computed yet"));
      if (gradientKnown) tooltip.append(el("div", {}, `gradient: ${info.gradient}`));
    }
  }
  const box = g.getBoundingClientRect();
  const host = tooltip.parentElement.getBoundingClientRect();
  tooltip.style.left = `${Math.max(0, box.left - host.left)}px`;
  tooltip.style.top = `${box.bottom - host.top + 6}px`;
  tooltip.hidden = false;
}

function graphPart(root) {
  const whole = drawing(walk.drawings.whole, "whole");
  const wholeBox = el("div", { class: "st-key-graph_whole lnlab-whole lnlab-essential" });
  wholeBox.append(whole.svg);
  const focusBox = el("div", { class: "st-key-graph_focused lnlab-focus lnlab-essential" });
  const tooltip = el("div", { class: "lnlab-tooltip", role: "tooltip", hidden: "" });
  const legend = el("details", { class: "lnlab-fold lnlab-legend" });
  legend.append(
    el("summary", {}, "How to read the graph"),
    el("p", {},
      "Yellow with a thick red outline and a bold name: this step. Blue: value known. " +
      "Orange with a thick brown outline: gradient known. Dotted grey: not computed yet. " +
      "Grey ellipses: the given inputs. Thick red arrows: what this step uses (forward: the " +
      "node's inputs; backward: where its gradient comes from). Hover or focus a node for its " +
      "shape and numbers; click one to go to its step."));
  root.replaceChildren(wholeBox, focusBox, tooltip, legend);
  let focusView = null;
  const wire = (svg) => {
    svg.addEventListener("click", (event) => {
      const g = event.target.closest(".lnlab-node");
      if (!g) return;
      const name = g.dataset.node;
      const index = walk.nodes.indexOf(name);
      if (index < 0) return;
      const backward = walk.steps[walk.step - 1].backward;
      go(backward ? walk.steps.length - index : index + 1);
    });
    svg.addEventListener("keydown", (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      const g = event.target.closest(".lnlab-node");
      if (!g) return;
      event.preventDefault();
      event.stopPropagation();
      g.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    });
    const show = (event) => {
      const g = event.target.closest && event.target.closest(".lnlab-node");
      if (g) tip(tooltip, g, g.dataset.node);
    };
    svg.addEventListener("pointerover", show);
    svg.addEventListener("focusin", show);
    svg.addEventListener("pointerleave", () => { tooltip.hidden = true; });
    svg.addEventListener("focusout", () => { tooltip.hidden = true; });
  };
  wire(whole.svg);
  return (n) => {
    const s = walk.steps[n - 1];
    light(whole, s);
    focusView = drawing(walk.drawings.focus[s.node], "focus");
    wire(focusView.svg);
    light(focusView, s);
    focusBox.replaceChildren(focusView.svg);
    tooltip.hidden = true;
  };
}

// ---- the numbers: the node's value or gradient, the check's verdict, what is one click away
function table(spec) {
  const t = el("table", { class: "lnlab-table" });
  const headRow = el("tr");
  headRow.append(el("th", { scope: "col" }, ""));
  for (const c of spec.columns) headRow.append(el("th", { scope: "col" }, c));
  const thead = el("thead");
  thead.append(headRow);
  const body = el("tbody");
  for (const row of spec.rows) {
    const tr = el("tr");
    tr.append(el("th", { scope: "row" }, row[0]));
    for (const cell of row.slice(1)) tr.append(el("td", {}, cell));
    body.append(tr);
  }
  t.append(thead, body);
  const box = el("div", { class: "lnlab-scroll", tabindex: "0", role: "region", "aria-label": "table" });
  box.append(t);
  return box;
}

function folded(summary, build) {
  const details = el("details", { class: "lnlab-fold" });
  details.append(el("summary", {}, summary));
  details.addEventListener("toggle", () => {
    if (details.open && details.children.length === 1) details.append(build());
  }, { once: false });
  return details;
}

function numbersPart(root) {
  return (n) => {
    const s = walk.steps[n - 1];
    const parts = [el("p", { class: "lnlab-meaning" }, s.meaning)];
    if (s.skipped) parts.push(el("p", { class: "lnlab-note" }, s.skipped));
    if (s.locked !== undefined) {
      parts.push(el("p", { class: "lnlab-locked" }, s.locked));
      root.replaceChildren(...parts);
      return;
    }
    for (const check of s.checks) {
      const status = check.status.replace(/\W+/g, "-");
      parts.push(el("p", { class: `lnlab-verdict lnlab-${status} lnlab-essential` }, check.line));
    }
    // The node's own numbers on screen.
    parts.push(blockOf(s.blocks[0], "lnlab-block lnlab-essential"));
    root.replaceChildren(...parts);
  };
}

function blockOf(block, cls) {
  const cells = el("div", { class: "lnlab-cells" });
  block.shown.slice(0, walk.shownEntries).forEach((text, j) => {
    cells.append(el("span", { class: "lnlab-cell", title: `[${j}] ${block.full[j]}` }, text));
  });
  if (block.shown.length > walk.shownEntries) {
    const more = block.shown.length - walk.shownEntries;
    // Short, so it stays on the cells' last row: the fold "Every vector" is right below.
    cells.append(el("span", { class: "lnlab-more", title: `${more} more entries under "Every vector"` },
      `+${more} more`));
  }
  const box = el("div", { class: cls });
  box.append(el("div", { class: "lnlab-title" }, block.title), cells);
  return box;
}

// ---- one click away: what a merge adds up, the parameters' gradients, every vector, the
// check's numbers and why (placed by the page's layout: beside the numbers on a desk, under
// the step's lines on a projector)
function foldsPart(root) {
  return (n) => {
    const s = walk.steps[n - 1];
    const folds = [];
    if (s.locked === undefined) {
      if (s.blocks.length > 1) {
        folds.push(folded(s.more, () => {
          const box = el("div");
          for (const block of s.blocks.slice(1)) box.append(blockOf(block, "lnlab-block"));
          return box;
        }));
      }
      folds.push(folded(`Every vector: ${s.rows.title}`, () => table(s.rows.table)));
      for (const check of s.checks) {
        folds.push(folded(`The check of ${check.name}: its numbers, and why`, () => {
          const box = el("div");
          box.append(el("p", {}, check.why), table(check.table));
          return box;
        }));
      }
    }
    root.replaceChildren(...folds);
  };
}

const PARTS = { head, graph: graphPart, numbers: numbersPart, folds: foldsPart };

// ---- a following student: the class's next step, asked of the server ----------------------
// One request waits at a time (pages/stepper/feed.py answers when the class moves). When the
// instructor moved the step alone (the same page and the same view as this lab's), the step is
// drawn at once, as a key press is; the class's run for it still comes, with the step's
// typeset lines. Anything more is left to that run, and so is a student who moved on their own.
// Whether this drawing is older than a step the server already gave the walk (the class
// moved twice before its run for the first was drawn): its step must not be taken back.
function follow(feed) {
  const same = Boolean(feed && walk.feed) && walk.feed.address === feed.address;
  const older = same && feed.after < walk.heard;
  walk.heard = !feed ? 0 : same ? Math.max(walk.heard, feed.after) : feed.after;
  walk.feed = feed || null;
  if (feed && !walk.asking) ask();
  if (!feed && walk.asking) walk.asking.abort();
  return older;
}

async function ask() {
  const asking = (walk.asking = new AbortController());
  while (walk.feed && walk.asking === asking) {
    const feed = walk.feed;
    let pause = 0;
    try {
      const url = `${feed.address}&after=${walk.heard}`;
      const answer = await fetch(url, { signal: asking.signal, cache: "no-store" });
      // 204: this server process does not look at the class (the runs still bring each step).
      if (answer.status === 200) take(await answer.json(), feed);
      else pause = 5000;
    } catch (err) {
      if (asking.signal.aborted) break;
      pause = 2000; // the server restarts or the network drops: the runs say what happened
    }
    if (pause) await new Promise((done) => setTimeout(done, pause));
  }
  if (walk.asking === asking) walk.asking = null;
}

// The sentence that the instructor has not opened a page yet (ui/live/follow.py's
// waiting_note): the class's first step on the Stepper answers it.
const WAITING = ".st-key-class_waiting";

function take(moved, feed) {
  if (moved.version === null || moved.version <= walk.heard) return;
  walk.heard = moved.version;
  if (moved.page !== "stepper" || moved.view !== feed.view || !moved.step) return;
  if (walk.step !== walk.server) return;
  for (const waiting of document.querySelectorAll(WAITING)) waiting.style.display = "none";
  walk.server = moved.step;
  go(moved.step, true);
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  if (!data || !data.walk) return;
  // The twenty steps come as one text (pages/stepper/browser.py), read once per version: a
  // class's step sends the same again.
  if (data.version !== walk.version || !walk.steps) {
    const read = JSON.parse(data.walk);
    walk.version = data.version;
    walk.steps = read.steps;
    walk.vector = read.vector;
    walk.shownEntries = read.shown_entries;
    walk.drawings = read.drawings;
    walk.labels = read.drawings.labels;
    walk.hover = read.hover;
    walk.nodes = read.nodes;
  }
  walk.sync = data.sync;
  walk.send = (n) => setTriggerValue("moved", n);
  const older = follow(data.feed);
  const root = parentElement.querySelector(".lnlab-walk");
  root.classList.toggle("lnlab-presenter", Boolean(data.presenter));
  // New numbers (other inputs, another vector) redraw the parts; the same ones keep them. So
  // does a new mount: Streamlit can mount the walk anew before it unmounts the old one.
  if (root.dataset.version !== data.version || walk.root !== root) {
    root.dataset.version = data.version;
    walk.root = root;
    walk.parts.clear();
    for (const [part, make] of Object.entries(PARTS)) {
      walk.parts.set(part, make(root.querySelector(`.lnlab-part-${part}`)));
    }
    walk.step = null;
  }
  // The server's step wins when it moved (a follower's instructor, a link) or on a new mount,
  // unless it is a step this browser told it: a run started by an earlier move answers after
  // later moves were drawn, and going back to its step would undo them.
  const index = walk.told.indexOf(data.step);
  if (walk.step !== null && index >= 0) {
    walk.told.splice(0, index + 1);
    walk.server = data.step;
    // That run drew the hidden control at its own step: it must hold the one shown again.
    const shown = walk.step;
    if (shown !== data.step) later(() => walk.step === shown && tellChannel(shown));
  } else if ((data.step !== walk.server && !older) || walk.step === null) {
    walk.told = [];
    walk.server = data.step;
    go(data.step, true);
  }
  // Only the mounted walk's own: an old one unmounted after the new one mounted must not
  // clear what the new one draws with (its parts would stay empty: its step never drawn).
  return () => {
    if (walk.root !== root) return;
    follow(null);
    walk.root = null;
    walk.parts.clear();
    walk.server = null;
    walk.step = null;
    walk.told = [];
  };
}
