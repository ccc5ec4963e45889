"""Streamlit's own floor for the lab's shape: a bare app that any page of the lab costs at least.

The same st.navigation over as many pages as the lab has (their count is set by the benchmark
in st.session_state["floor_pages"] before the first run), the same eight sidebar widgets of the
same kinds and labels as ui/session/sidebar.py draws at the default shape (a selectbox, two
radios, four text fields, a toggle), and a page that writes one line of markdown. Run by
bench/page_cpu.py in AppTest, in the same process and Streamlit as the lab's pages.
"""

import streamlit as st


def one_line() -> None:
    st.markdown("One line of markdown.")


count = st.session_state["floor_pages"]
# Callables rather than files: every page is the same one line, and url_path keeps them apart.
page = st.navigation(
    [
        st.Page(one_line, title=f"Page {i}", url_path=f"page{i}", default=i == 0)
        for i in range(count)
    ]
)
with st.sidebar:
    st.selectbox("Preset", [f"Preset {i}" for i in range(6)])
    shapes = ["vector (D)", "rows (N x D)", "tokens (B x L x D)"]
    st.radio("Shape", shapes, index=1, horizontal=True)
    st.text_input("Vectors (rows)", "3")
    st.text_input("D (features)", "8")
    st.text_input("Random seed", "0")
    st.text_input("eps", "1e-05")
    st.radio("dtype", ["float64", "float32"], horizontal=True)
    st.toggle("Presenter mode")
page.run()
