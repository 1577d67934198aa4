//===- ember.h - The Ember runtime's C++ API --------------------*- C++ -*-===//
//
// One include for applications embedding the runtime (link Ember::runtime).
// C programs use ember/c_api.h instead.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EMBER_H
#define EMBER_EMBER_H

#include "ember/bounds_check.h"
#include "ember/dtype.h"
#include "ember/kjt.h"
#include "ember/session.h"
#include "ember/status.h"
#include "ember/tensor.h"

#endif // EMBER_EMBER_H
