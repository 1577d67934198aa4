//===- device_test.cpp - CUDA device discovery ----------------------------===//
#include "cuda/device.h"

#include <gtest/gtest.h>

using namespace ember;

TEST(CudaDevice, ListsDevicesOrSaysWhyNot) {
  auto devices = cuda::listDevices();
  if (!devices.isOk()) {
    // No GPU here (development and CI machines): the error must explain it.
    EXPECT_EQ(devices.status().code(), StatusCode::kUnavailable);
    EXPECT_FALSE(devices.status().message().empty());
    GTEST_SKIP() << devices.status().message();
  }
  ASSERT_FALSE(devices->empty());
  for (const auto &d : *devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.totalMemoryBytes, 0u);
    EXPECT_GT(d.multiprocessors, 0);
  }
}
