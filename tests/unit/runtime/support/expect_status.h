//===- expect_status.h - Checking error Statuses in tests -------*- C++ -*-===//
#ifndef EMBER_TESTS_EXPECT_STATUS_H
#define EMBER_TESTS_EXPECT_STATUS_H

#include "ember/status.h"

#include <gtest/gtest.h>

/// EXPECT_ERROR(status, StatusCode::kDataLoss, "checksum"): the status has
/// that code and its message contains the fragment.
#define EXPECT_ERROR(status_expr, expected_code, fragment)                     \
  do {                                                                         \
    ::ember::Status ember_s_ = (status_expr);                                  \
    EXPECT_EQ(ember_s_.code(), expected_code) << ember_s_.toString();          \
    EXPECT_NE(ember_s_.message().find(fragment), std::string::npos)            \
        << "message: " << ember_s_.message()                                   \
        << "\nexpected to contain: " << (fragment);                            \
  } while (0)

/// ASSERT_OK(status): the status is ok; otherwise the test stops and prints
/// it (a bare ASSERT_TRUE(s.isOk()) would hide the message).
#define ASSERT_OK(status_expr)                                                 \
  do {                                                                         \
    ::ember::Status ember_s_ = (status_expr);                                  \
    ASSERT_TRUE(ember_s_.isOk()) << ember_s_.toString();                       \
  } while (0)

#endif // EMBER_TESTS_EXPECT_STATUS_H
