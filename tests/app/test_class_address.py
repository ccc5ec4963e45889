"""The address a class can open (ui.session.address): never 127.0.0.1 without a warning."""

from __future__ import annotations

import pytest

from ui.session.address import Address, Listening, class_address, lan_address, listening


@pytest.mark.parametrize(
    ("browser", "listen", "lan", "base", "warned"),
    [
        # The instructor opened the lab by its network name: students use the same.
        (
            "http://lab.school.example:8501/stepper?x=1",
            "0.0.0.0",
            "10.0.0.5",
            "http://lab.school.example:8501",
            False,
        ),
        # Opened on the machine itself, listening on the network: the machine's LAN address.
        (
            "http://127.0.0.1:8502/export",
            "0.0.0.0",
            "192.168.1.20",
            "http://192.168.1.20:8502",
            False,
        ),
        ("http://localhost:8502/", "", "192.168.1.20", "http://192.168.1.20:8502", False),
        # Listening on this computer only: the local link, and a warning.
        ("http://127.0.0.1:8502/", "127.0.0.1", "192.168.1.20", "http://127.0.0.1:8502", True),
        # On the network but no address: a warning too.
        ("http://localhost:8502/", "0.0.0.0", None, "http://localhost:8502", True),
        # A named interface: its address.
        ("http://127.0.0.1:8502/", "10.1.2.3", None, "http://10.1.2.3:8502", False),
    ],
)
def test_the_class_gets_an_address_it_can_open_or_a_warning(browser, listen, lan, base, warned):
    address = class_address(browser, Listening(listen, 8502), lan)
    assert address.base == base
    assert (address.warning is not None) == warned
    if listen == "127.0.0.1":
        assert "`./run.sh --server.port 8502 --server.address 0.0.0.0`" in address.warning


def test_behind_haproxy_the_warning_names_the_replicas_command(monkeypatch):
    # The app processes listen on 127.0.0.1 behind HAProxy: what to restart is ./run.sh
    # --replicas, whose option is --address (ui.server.launch's --server.address is not).
    monkeypatch.setenv("LNLAB_BALANCER", "2 127.0.0.1 8600")
    listen = listening()
    assert listen == Listening("127.0.0.1", 8600, 2)
    address = class_address("http://127.0.0.1:8600/class", listen, "10.0.0.5")
    assert "(--address 127.0.0.1)" in address.warning
    assert "`./run.sh --replicas 2 --port 8600 --address 0.0.0.0`" in address.warning
    spread = class_address("http://127.0.0.1:8600/", Listening("0.0.0.0", 8600, 2), "10.0.0.5")
    assert spread == Address("http://10.0.0.5:8600")


def test_the_lan_address_is_never_loopback():
    address = lan_address()
    assert address is None or not address.startswith("127.")


# -- the links a page offers --------------------------------------------------------------------

from urllib.parse import parse_qsl, urlsplit  # noqa: E402

from ui.session import class_link, share  # noqa: E402

CONFTEST_TITLES = {
    "Overview": "",
    "Inputs": "inputs",
    "Stepper": "stepper",
    "Jacobian": "jacobian",
    "Gradient check": "gradcheck",
    "Derivation audit": "audit",
    "Check your derivation": "derive",
    "Residual block": "residual",
    "LayerNorm vs BatchNorm": "batchnorm",
    "Export and share": "export",
}


def _query(link: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(link).query))


def test_the_builder_names_every_page_as_the_app_does(lab):
    assert {title: path for path, title in class_link.PAGE_TITLES.items()} == CONFTEST_TITLES
    assert set(CONFTEST_TITLES) == set(lab.titles)


def test_the_export_link_opens_the_view_one_came_from(lab):
    lab.open("Stepper").step_to(5)
    lab.open("Export and share")
    lab.assert_no_exception()
    link = lab.at.main.code[0].value
    assert urlsplit(link).path == "/stepper", link
    assert _query(link)["step"] == "5"
    assert "Opens the Stepper page" in " ".join(c.value for c in lab.at.main.caption)


@pytest.mark.parametrize("page", ["Overview", "Stepper", "Jacobian", "Residual block"])
def test_every_page_offers_a_link_to_its_view(lab, page):
    lab.open(page)
    codes = [c.value for c in lab.at.main.code if "?" in c.value and "preset=" in c.value]
    assert codes, f"{page} offers no link to its view"
    assert _query(codes[-1])["seed"] == str(lab.state["seed"])


def test_the_link_builder_hides_pages_and_controls_and_turns_presenter_on(lab):
    lab.open("Stepper").step_to(7)
    lab.open("Export and share")
    lab.at.main.multiselect(key="builder_hide").set_value(["audit", "jacobian"])
    lab.at.main.toggle(key="builder_controls").set_value(True)
    lab.at.main.toggle(key="builder_presenter").set_value(True)
    lab.run()
    lab.assert_clean()
    link = lab.at.main.code[1].value
    query = _query(link)
    assert urlsplit(link).path == "/stepper"
    assert query["hide"] == "audit,jacobian,controls" and query["presenter"] == "1"
    assert query["step"] == "7"
    parsed = share.parse(query)
    assert parsed.problems == [] and parsed.hidden == {"audit", "jacobian", "controls"}
    image = class_link.qr_image(link, "QR code of the class link")
    assert image in lab.html(), "no QR code"
    # An image st.html keeps (its sanitiser drops inline SVG), named for a screen reader.
    assert image.startswith('<img src="data:image/png;base64,') and "<svg" not in image
    assert 'alt="QR code of the class link"' in image


def test_a_class_link_with_hidden_controls_hides_the_presenter_popover_too(open_link):
    lab = open_link({"hide": "controls", "presenter": "1"}).open("Stepper")
    lab.assert_clean()
    assert not [t for t in lab.at.toggle if t.label == "Show the sidebar"]
    plain = open_link({"presenter": "1"}).open("Stepper")
    assert [t for t in plain.at.toggle if t.label == "Show the sidebar"]
