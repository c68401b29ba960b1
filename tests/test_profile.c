// SPDX-License-Identifier: Apache-2.0
/* test_profile.c: Dolan-More performance profiles on hand-made tables of costs. */
#include "../harness/fl_harness.h"
#include "fl_test.h"

FL_TEST(dolan_more_hand_table) {
  // three problems, two solvers; A fails problem 3
  //            A     B       ratios A: 1, 2, inf   B: 2, 1, 1
  double cost[] = {1, 2,  //
                   2, 1,  //
                   INFINITY, 4};
  double tau[] = {1, 1.5, 2, 10};
  double rho[8];
  ASSERT_OK(fl_perf_profile(3, 2, cost, 4, tau, rho));
  double wantA[] = {1.0 / 3, 1.0 / 3, 2.0 / 3, 2.0 / 3}, wantB[] = {2.0 / 3, 2.0 / 3, 1, 1};
  for (int t = 0; t < 4; t++) {
    ASSERT_NEAR(rho[t], wantA[t], 1e-15);
    ASSERT_NEAR(rho[4 + t], wantB[t], 1e-15);
  }
  return 0;
}

FL_TEST(unsolved_problems_stay_in_the_denominator) {
  // problem 2 is solved by nobody: no solver reaches 1
  double cost[] = {3, 6, INFINITY, INFINITY};
  double tau[] = {1, 2, 1e9};
  double rho[6];
  ASSERT_OK(fl_perf_profile(2, 2, cost, 3, tau, rho));
  ASSERT_NEAR(rho[0], 0.5, 1e-15);
  ASSERT_NEAR(rho[2], 0.5, 1e-15);
  ASSERT_NEAR(rho[3], 0.0, 1e-15); // B at tau = 1: ratio 2
  ASSERT_NEAR(rho[4], 0.5, 1e-15); // B at tau = 2
  return 0;
}

FL_TEST(ties_and_zero_costs) {
  // both solve at iteration 0 (cost 0): both ratio 1; a tie at cost 5 too
  double cost[] = {0, 0, 5, 5, 0, 7};
  double tau[] = {1};
  double rho[2];
  ASSERT_OK(fl_perf_profile(3, 2, cost, 1, tau, rho));
  ASSERT_NEAR(rho[0], 1.0, 1e-15);
  ASSERT_NEAR(rho[1], 2.0 / 3, 1e-15);
  return 0;
}

FL_TEST(bad_costs_rejected) {
  double cost[] = {1, NAN};
  double tau[] = {1}, rho[2];
  ASSERT_EQ(fl_perf_profile(1, 2, cost, 1, tau, rho), FL_ERR_INVAL);
  double neg[] = {1, -1};
  ASSERT_EQ(fl_perf_profile(1, 2, neg, 1, tau, rho), FL_ERR_INVAL);
  return 0;
}
