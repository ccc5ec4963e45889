"""Check your derivation in a real browser: the formula as the lab read it is typeset by
KaTeX, the verdict follows, and a formula the lab cannot read is named at its place. The
screenshots (right, wrong, unparsable at 1440x900 and 390x844) go to screenshots/."""

from __future__ import annotations

from urllib.parse import urlencode

import lnlab_browser_kit as kit
import pytest

pytestmark = pytest.mark.browser

FORMULAS = {
    "right": ("rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))", "Correct"),
    "wrong": ("1/√(σ²+ε) * (dxhat - mean(dxhat))", "Wrong"),
    "unparsable": ("rstd * (dxhat - mean(dxhat] + foo", None),
}


@pytest.mark.parametrize("size", [(1440, 900), (390, 844)], ids=["desktop", "phone"])
def test_right_wrong_and_unparsable_formulas(page, server, size):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    for name, (formula, verdict) in FORMULAS.items():
        kit.open_page(page, server, "derive?" + urlencode({"formula": formula, "quantity": "dx"}))
        assert not kit.problems(page)
        main = kit.main(page)
        kit.screenshot(page, f"derive_{name}_{size[0]}x{size[1]}")
        if verdict is None:
            assert not main.locator(".katex").count()
            shown = kit.errors(main)
            assert shown and "does not match the (" in shown[0], shown
            top = main.locator('[data-testid="stAlertContainer"]').first
        else:
            assert main.locator(".katex").count() >= 1  # the formula as read, typeset
            assert kit.heading(page, "h2", f"^{verdict}$") == verdict
            top = main.get_by_text("How the lab reads your formula")
        top.evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        kit.screenshot(page, f"derive_{name}_{size[0]}x{size[1]}_result")


@pytest.mark.parametrize("size", [(1440, 900), (390, 844)], ids=["desktop", "phone"])
def test_a_named_slip_with_its_counterexample_and_a_refused_notation(page, server, size):
    """A slip of one term is named, the probe that shows it is laid out as numbers with a
    link that opens the Stepper on them; np.mean is refused with the form to type."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    slip = "dxhat rstd + dvar (x−μ)/N + dmu/N"
    kit.open_page(page, server, "derive?" + urlencode({"formula": slip, "quantity": "dx"}))
    assert not kit.problems(page)
    main = kit.main(page)
    assert kit.heading(page, "h2", "^Wrong$") == "Wrong"
    assert main.get_by_text("The 2 of 2(x − μ)/N is lost.", exact=False).count()
    read = main.get_by_text("How the lab reads your formula")
    read.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    kit.screenshot(page, f"derive_slip_{size[0]}x{size[1]}")
    redo = main.get_by_text("Redo it by hand.")
    redo.first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    kit.screenshot(page, f"derive_counterexample_{size[0]}x{size[1]}")
    link = main.get_by_role("link", name="Open this input in the lab")
    assert "/stepper?" in (link.get_attribute("href") or "")

    refused = "np.mean(dxhat)"
    kit.open_page(page, server, "derive?" + urlencode({"formula": refused, "quantity": "dx"}))
    shown = kit.errors(kit.main(page))
    assert shown and "write mean(…)" in shown[0], shown
    kit.main(page).locator('[data-testid="stAlertContainer"]').first.evaluate(
        "e => e.scrollIntoView({block: 'center'})"
    )
    page.wait_for_timeout(300)
    kit.screenshot(page, f"derive_refused_{size[0]}x{size[1]}")
