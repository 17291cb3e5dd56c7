// SPDX-License-Identifier: GPL-2.0
/*
 * lrb.ko: the lrb core as a module, and the home of the files that publish
 * channels to user space: one character device region and device class for
 * all of them, a minor number per file, and the CPU hotplug state whose
 * instances are the channels.
 */
#include <linux/cpuhotplug.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/module.h>

#include "lrb_module.h"

#define LRB_MINORS BIT(16)

static dev_t lrb_devt;
static DEFINE_IDA(lrb_minors);
int lrb_cpuhp_state;
int lrb_cpuhp_dead_state;

/*
 * Files are root's and read-only: they hold what the kernel traced. A
 * previous run's release file is write-only.
 */
static char *lrb_devnode(const struct device *dev, umode_t *mode)
{
	const char *file = strrchr(dev_name(dev), '!');

	if (mode)
		*mode = file && !strcmp(file, "!release") ? 0200 : 0400;
	return NULL;
}

static const struct class lrb_class = {
	.name = "lrb",
	.devnode = lrb_devnode,
};

static void lrb_kdev_release(struct device *dev)
{
	struct lrb_kdev *kdev = container_of(dev, struct lrb_kdev, dev);

	ida_free(&lrb_minors, MINOR(dev->devt));
	lrb_kchan_put(kdev->kc);
}

/**
 * lrb_kdev_add() - create /dev/lrb/<channel>/<file>
 * @kc: the channel, which the device holds a reference on until released
 * @kdev: the device to set up
 * @fops: its file operations
 * @file: its name in the channel's directory
 *
 * Return: 0 or a negative error; on error, nothing is left to undo.
 */
int lrb_kdev_add(struct lrb_kchan *kc, struct lrb_kdev *kdev,
		 const struct file_operations *fops, const char *file)
{
	int minor, ret;

	minor = ida_alloc_max(&lrb_minors, LRB_MINORS - 1, GFP_KERNEL);
	if (minor < 0)
		return minor;
	kdev->kc = kc;
	kref_get(&kc->ref);
	device_initialize(&kdev->dev);
	kdev->dev.class = &lrb_class;
	kdev->dev.devt = MKDEV(MAJOR(lrb_devt), minor);
	kdev->dev.release = lrb_kdev_release;
	cdev_init(&kdev->cdev, fops);
	kdev->cdev.owner = THIS_MODULE;
	/* '!' becomes '/' in the device node's path */
	ret = dev_set_name(&kdev->dev, "lrb!%s!%s", kc->name, file);
	if (!ret)
		ret = cdev_device_add(&kdev->cdev, &kdev->dev);
	if (ret)
		put_device(&kdev->dev);
	return ret;
}

/**
 * lrb_kdev_del() - remove a device; open files keep working
 * @kdev: device from lrb_kdev_add()
 */
void lrb_kdev_del(struct lrb_kdev *kdev)
{
	cdev_device_del(&kdev->cdev, &kdev->dev);
	put_device(&kdev->dev);
}

static int __init lrb_init(void)
{
	int ret;

	ret = alloc_chrdev_region(&lrb_devt, 0, LRB_MINORS, "lrb");
	if (ret)
		return ret;
	ret = class_register(&lrb_class);
	if (ret)
		goto unregister_region;
	ret = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "lrb:online",
				      lrb_kchan_online, lrb_kchan_offline);
	if (ret < 0)
		goto unregister_class;
	lrb_cpuhp_state = ret;
	ret = cpuhp_setup_state_multi(CPUHP_BP_PREPARE_DYN, "lrb:dead", NULL,
				      lrb_kchan_dead);
	if (ret < 0)
		goto remove_online;
	lrb_cpuhp_dead_state = ret;
	return 0;

remove_online:
	cpuhp_remove_multi_state(lrb_cpuhp_state);
unregister_class:
	class_unregister(&lrb_class);
unregister_region:
	unregister_chrdev_region(lrb_devt, LRB_MINORS);
	return ret;
}

/*
 * Clients and open files hold the module: no channel is left here but the
 * previous runs lrb.ko itself shows.
 */
static void __exit lrb_exit(void)
{
	lrb_kregion_exit();
	cpuhp_remove_multi_state(lrb_cpuhp_dead_state);
	cpuhp_remove_multi_state(lrb_cpuhp_state);
	class_unregister(&lrb_class);
	unregister_chrdev_region(lrb_devt, LRB_MINORS);
	ida_destroy(&lrb_minors);
}

module_init(lrb_init);
module_exit(lrb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lrb: lockless per-CPU ring buffers");
