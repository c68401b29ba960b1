// SPDX-License-Identifier: Apache-2.0
/* test_figures.c: figure recipes' computations and the figure registry. */
#include "../harness/figures/fl_figure.h"
#include "fl_test.h"

int fl__fig28_chain_cond(int n, double mass_ratio, double stiff_ratio, double dt, double *cp,
                         double *cd);

FL_TEST(fig28_equal_at_unit_ratio) {
  // M = m I, K = k I: H_p = m I + dt^2 k J^T J and H_d = (m I + dt^2 k J J^T)/(m k) have the same
  // spectrum up to a factor, since J^T J and J J^T share eigenvalues
  double cp, cd;
  ASSERT_OK(fl__fig28_chain_cond(10, 1, 1, 1.0 / 60, &cp, &cd));
  ASSERT_NEAR(cp / cd, 1, 1e-9);
  // and for one particle both are 1
  ASSERT_OK(fl__fig28_chain_cond(1, 1, 1, 1.0 / 60, &cp, &cd));
  ASSERT_NEAR(cp, 1, 1e-12);
  ASSERT_NEAR(cd, 1, 1e-12);
  return 0;
}

FL_TEST(fig28_mirror_in_the_stiff_regime) {
  // the stiff regime dt^2 k >> m_n: k = 1e6 N/m and dt = 1/60 s give dt^2 k = 278 kg, and a
  // last mass of 10 kg stays inside it
  double cp1, cd1, cp2, cd2;
  ASSERT_OK(fl__fig28_chain_cond(10, 1, 1, 1.0 / 60, &cp1, &cd1));
  ASSERT_OK(fl__fig28_chain_cond(10, 10, 1, 1.0 / 60, &cp2, &cd2));
  ASSERT(cd2 > 2 * cd1);      // the dual degrades with the mass ratio
  ASSERT(cp2 < 1.2 * cp1);    // the primal does not
  ASSERT_OK(fl__fig28_chain_cond(10, 1, 1e4, 1.0 / 60, &cp2, &cd2));
  ASSERT(cp2 > 1e3 * cp1);    // the primal degrades with the stiffness ratio
  ASSERT_NEAR(cd2 / cd1, 1, 0.05); // the dual does not
  return 0;
}

FL_TEST(registry_lists_every_paper_figure) {
  // PROBLEMS.md section 7: every name known, available or with a reason
  const char *names[] = {"macklin-fig15", "macklin-fig18", "macklin-fig19", "macklin-fig20",
                         "macklin-fig22", "macklin-fig26", "macklin-fig27", "macklin-fig28",
                         "macklin-fig30", "macklin-fig31", "han-fig4", "han-fig5", "han-table1",
                         "masterjohn-fig5", "masterjohn-fig6", "zong-fig3", "zong-fig6"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    const fl_figure_recipe *r = fl_figure_find(names[k]);
    ASSERT(r != NULL);
    const char *why = fl_figure_missing(r);
    ASSERT(why == NULL || strlen(why) > 0);
  }
  ASSERT(fl_figure_find("nonsense") == NULL);
  ASSERT(fl_figure_missing(fl_figure_find("macklin-fig28")) == NULL);
  ASSERT(fl_figure_missing(fl_figure_find("zong-fig6")) == NULL);
  ASSERT(fl_figure_missing(fl_figure_find("han-fig4")) == NULL);
  ASSERT(fl_figure_missing(fl_figure_find("han-table1")) == NULL);
  return 0;
}


/* Each figure names its paper, and the sizes: a figure without a medium size of its own runs
 * its quick size for medium; the paper's size takes longest. */
FL_TEST(figures_name_papers_and_sizes) {
  const fl_figure_recipe *r = fl_figure_find("macklin-fig20");
  ASSERT(r != NULL);
  ASSERT(strcmp(fl_figure_cite(r), "Macklin 2020") == 0);
  ASSERT_STR_CONTAINS(fl_figure_reference(fl_figure_find("han-fig4")), "arXiv:2303.08912");
  ASSERT_EQ(fl_figure_tier(r, FL_FIG_MEDIUM), FL_FIG_MEDIUM);
  ASSERT_EQ(fl_figure_tier(fl_figure_find("macklin-fig28"), FL_FIG_MEDIUM), FL_FIG_QUICK);
  for (const fl_figure_recipe *const *f = fl_figures(); *f; f++) {
    ASSERT(fl_figure_estimate(*f, FL_FIG_FULL, 1) >= fl_figure_estimate(*f, FL_FIG_MEDIUM, 1));
    ASSERT(fl_figure_estimate(*f, FL_FIG_MEDIUM, 1) >= fl_figure_estimate(*f, FL_FIG_QUICK, 1));
    ASSERT(fl_figure_estimate(*f, FL_FIG_QUICK, 1) > 0);
  }
  ASSERT(fl_figure_estimate(fl_figure_find("han-fig4"), FL_FIG_FULL, 4) <
         fl_figure_estimate(fl_figure_find("han-fig4"), FL_FIG_FULL, 1));
  return 0;
}
