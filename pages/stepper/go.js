// A following student's step from the instructor, without the twenty steps: the server reran
// only the Stepper's small step fragment (ui/live/follow.py, woken_step), whose data is the
// step; the walk (walk.js) moves to it as it would for the server's step in its own data.
export default function (component) {
  const { data } = component;
  const walk = window.__lnlabWalk;
  if (!data || !walk || data.step === walk.server) return;
  walk.server = data.step;
  if (walk.go && walk.steps) walk.go(data.step, true);
}
