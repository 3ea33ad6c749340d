"""The per-family target re-stated against the official code's own published SPP results.

`Zh-Shuai/CADES` publishes one plot per family (`experiments/output/output_spp/*.png`, AUROC
vs η for CADES and the six baselines KS arrival, KS inter-event, χ², 3S, Q+, Q−; 10 seeds
of 1,000 OOD sequences). Read off those plots (mean over η > 0), CADES is the top curve in
some families, level with the top within the plots' resolution in others, and clearly
below a single statistic in three. `OFFICIAL_SPP` records that reading; the re-stated
target holds our CADES to what the official code itself shows, family by family:

  "top" / "tied": CADES − best baseline >= −max(TIE, 2 SE) (TIE: the plots cannot
                  separate curves closer than about one marker, 0.01 AUROC)
  "below":        the best baseline in our run is one the official plot shows above CADES,
                  and it is above CADES here too (the official ordering is reproduced)
"""
from __future__ import annotations

from lib.common.report import target

TIE = 0.01

# family: (verdict in the official plot, statistics the plot shows above or level with CADES)
OFFICIAL_SPP = {
    "increasing_rate": ("below", ("q_plus",)),
    "decreasing_rate": ("tied", ("q_plus",)),
    "inhomogeneous_official": ("top", ()),
    "renewal_up": ("tied", ("q_minus", "sss")),
    "renewal_down": ("below", ("ks_interevent", "q_minus")),
    "hawkes": ("top", ()),
    "self_correcting": ("below", ("ks_arrival",)),
    "stopping": ("top", ()),
    "uniform_official": ("tied", ("ks_arrival", "ks_interevent", "chi2", "q_minus")),
}


def restated(summary: dict, family: str) -> dict | None:
    """The re-stated target of one family from its `report.family_summary` (which must hold
    the `baselines` comparison); None for a family the official code does not plot."""
    if family not in OFFICIAL_SPP or "baselines" not in summary:
        return None
    verdict, named = OFFICIAL_SPP[family]
    c = summary["baselines"]
    bar = max(TIE, 2 * c["diff_se"])
    met = (c["best"] in named and c["diff"] < 0) if verdict == "below" else c["diff"] >= -bar
    return target(met, official=verdict, official_above=list(named), best=c["best"],
                  diff=c["diff"], diff_se=c["diff_se"], bar=bar)


def targets(families: dict) -> dict | None:
    """{"per_family": {family: restated}, "met", "missed"} over the official families run."""
    rows = {k: restated(v["summary"], k) for k, v in families.items()}
    rows = {k: v for k, v in rows.items() if v is not None}
    if not rows:
        return None
    missed = sorted(k for k, v in rows.items() if not v["met"])
    return target(not missed, per_family=rows, missed=missed)


def table(t: dict, labels: dict) -> str:
    """Markdown: family, the official plot's verdict, our best baseline and CADES − it."""
    rows = ["| family | official plot: CADES is | above/level with CADES there | best baseline "
            "here | CADES − it (± SE) | re-stated target |", "|---|---|---|---|---|---|"]
    for fam, r in t["per_family"].items():
        above = ", ".join(labels[m] for m in r["official_above"]) or "—"
        rule = (f"best baseline one of {above}, above CADES" if r["official"] == "below"
                else f"CADES − best >= −{r['bar']:.3f}")
        rows.append(f"| {fam} | {r['official']} | {above} | {labels[r['best']]} | "
                    f"{r['diff']:+.3f} ± {r['diff_se']:.3f} | "
                    f"{'met' if r['met'] else 'MISSED'} ({rule}) |")
    return ("CADES against the official code's baselines, family by family, next to what the "
            "official code's own plots show (re-stated target)\n\n" + "\n".join(rows))
