"""The five source documents the lab was built from, named by what they are, each with the
key from its notation to the lab's."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Symbol:
    """One symbol of a document (LaTeX) and what it is in the lab's words."""

    document: str
    lab: str


@dataclass(frozen=True)
class Document:
    """key: '000'..'004' (the order the lab received them); name: what the document is."""

    key: str
    name: str
    summary: str
    notation: tuple[Symbol, ...]


DOCUMENTS: dict[str, Document] = {
    d.key: d
    for d in (
        Document(
            key="000",
            name="the residual-connection derivation",
            summary="Derives the backward pass of a post-LN block, LayerNorm(x + Sublayer(x)), "
            "for one vector, with one scalar γ and β and σ without ε; builds the Jacobian "
            "entry by entry, then splits the gradient between x and the sublayer.",
            notation=(
                Symbol("N", "D, the number of features of a vector"),
                Symbol(r"\mathbf{z}^{(n)}", "LayerNorm's input x (here x + the sublayer's output)"),
                Symbol(r"\mathbf{y}^{(n+1)}", "LayerNorm's output, out"),
                Symbol(r"\mathbf{y}^{(n)}", "the sublayer's output"),
                Symbol(r"\mathbf{x}", "the block's input (the Residual block page)"),
                Symbol("C", "the loss L"),
                Symbol(r"\partial C / \partial \mathbf{y}^{(n+1)}", "dout, the upstream gradient"),
                Symbol(r"\mu,\ V,\ \sigma", "sample_mean, sample_var, its square root (no ε)"),
                Symbol(r"w_k", "normalized_x, x̂"),
                Symbol(r"\gamma,\ \beta", "one number each (the lab has one per feature)"),
                Symbol(r"\mathbf{J}", "(Nσ/γ) times the Jacobian ∂out/∂x"),
            ),
        ),
        Document(
            key="001",
            name="the three-path ∇X derivation",
            summary="Derives ∇X for one vector by following x to x̂ directly, through μ and "
            "through σ (σ without ε), then writes the result in vector and compact form.",
            notation=(
                Symbol("n", "D, the number of features"),
                Symbol(r"X,\ \hat{X},\ Y", "x, normalized_x (x̂), out"),
                Symbol(r"\nabla_Y,\ \nabla_{\hat{X}},\ \nabla_X", "dout, dnormalized_x, dx"),
                Symbol(r"\mu,\ \sigma", "sample_mean, the square root of sample_var (no ε)"),
                Symbol(r"\gamma,\ \beta", "one per feature, as in the lab"),
                Symbol(r"\mathcal{L}", "the loss L"),
                Symbol(r"\odot,\ \cdot", "entry-wise product; dot product (a sum over features)"),
            ),
        ),
        Document(
            key="002",
            name="the 'transpose of batch normalization' notes",
            summary="Presents LayerNorm as BatchNorm on the transposed input and derives dγ, "
            "dβ and dx for a mini-batch through the partials with respect to x̂, μ and σ², "
            "numbered (1) to (10).",
            notation=(
                Symbol("H", "D, the number of features (hidden units)"),
                Symbol("m", "the number of vectors in the batch"),
                Symbol(r"x_j,\ \hat{x}_j", "entry j of x and of normalized_x"),
                Symbol(r"\mu,\ \sigma^2,\ \epsilon", "sample_mean, sample_var, eps"),
                Symbol(r"\partial \mathcal{L} / \partial y", "dout"),
                Symbol(r"\partial \mathcal{L} / \partial \hat{\mathbf{x}}", "dnormalized_x"),
                Symbol(r"\gamma,\ \beta", "one per feature, as in the lab"),
            ),
        ),
        Document(
            key="003",
            name="the per-token transformer derivation",
            summary="Derives the gradients for one token's vector of D features step by step "
            "(dβ, dγ, dσ², dμ, then dx) and sums dγ, dβ over batch and sequence in a table.",
            notation=(
                Symbol("D", "D, the number of features"),
                Symbol("N,\\ L", "batch size and sequence length (the lab's B and L)"),
                Symbol(r"dy,\ dx", "dout and dx"),
                Symbol(r"d\hat{x},\ d\sigma^2,\ d\mu", "dnormalized_x, dsample_var, dsample_mean"),
                Symbol(r"\mu,\ \sigma^2,\ \varepsilon", "sample_mean, sample_var, eps"),
                Symbol(r"b,\ s", "the batch and sequence index of a token"),
            ),
        ),
        Document(
            key="004",
            name="the computational-graph walkthrough (BatchNorm's graph)",
            summary="Splits the forward pass into the ten nodes the lab uses and backpropagates "
            "through them one local derivative at a time. Its steps ① and ④ average over the N "
            "samples of the batch: as a LayerNorm derivation it is BatchNorm's graph, so the "
            "audit judges it over the vectors of your x, per feature.",
            notation=(
                Symbol("N", "the number of vectors in the batch (the axis it averages over)"),
                Symbol("D", "D, the number of features"),
                Symbol(r"\text{sqr\_sve},\ \text{inversed\_sqr\_sve}", "sqrt_sve, inv_sqrt_sve"),
                Symbol(r"d\gamma x", "dgx"),
                Symbol(r"dx_{sm1},\ dx_{sm2}", "dx_sm_via_normalized_x, dx_sm_via_sq_xsm"),
                Symbol(r"dx_1,\ dx_2", "dx_via_x_sm, dx_via_sample_mean"),
                Symbol("dout", "dout"),
            ),
        ),
    )
}
